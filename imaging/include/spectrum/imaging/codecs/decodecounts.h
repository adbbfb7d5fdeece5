// SPDX-License-Identifier: Apache-2.0
#pragma once
// How many times each instance was decoded, and filtered, in this process: the workstation's promise that an
// arriving image is decoded once (and filtered once) — the image decoded while it arrives is the one shown and
// kept — is counted here, so that tests can hold it to it. Thread-safe; a hash insert per image once counting has
// begun (resetDecodeCounts()), an atomic load before: a working day's 900,000 instances are not kept here.

#include <QHash>
#include <QString>

namespace spectrum {

/// Counted by every decoder of whole images: decodeDicom(), ProgressiveImage.
void noteDecoded(const QString &sopInstanceUid);
/// Counted wherever a filter chain runs over a whole image for display.
void noteFiltered(const QString &sopInstanceUid);

struct DecodeCounts
{
    QHash<QString, int> decoded;   ///< SOP Instance UID → decodes
    QHash<QString, int> filtered;  ///< SOP Instance UID → filter passes
};
DecodeCounts decodeCounts();
/// Clears the counts and counts from now on (nothing is counted before the first call).
void resetDecodeCounts();

} // namespace spectrum
