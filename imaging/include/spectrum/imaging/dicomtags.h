// SPDX-License-Identifier: Apache-2.0
#pragma once
// The elements of a DICOM instance as a reader looks them up: tag, keyword, VR and value — text in the instance's
// character set, numbers as written, long or binary values summarised — with sequences as nested items. For the
// workstation's tag viewer; read with DCMTK, whose dictionary names the tags.

#include "spectrum/core/bytes.h"
#include "spectrum/core/result.h"

#include <QList>
#include <QString>

namespace spectrum {

struct DicomTagRow
{
    quint16 group = 0;
    quint16 element = 0;
    QString keyword;           ///< "PatientName"; "Unknown" / "PrivateTag" where the dictionary has none
    QString vr;                ///< "PN", "SQ"…; for an item row, empty
    QString value;             ///< as text (at most a few hundred characters; binary data summarised)
    QList<DicomTagRow> children;  ///< a sequence's items, and an item's elements

    /// "(0010,0010)".
    QString tagText() const;
};

/// The file meta information and the dataset of `bytes` (a Part 10 file or a bare dataset), in file order.
Result<QList<DicomTagRow>> readDicomTags(const ByteView &bytes);

} // namespace spectrum
