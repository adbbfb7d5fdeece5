// SPDX-License-Identifier: Apache-2.0
#pragma once
// DICOM UIDs of our own, under the "2.25" root (ISO/IEC 9834-8: a UUID written as one decimal integer), so
// Spectrum needs no registered organisation root and its UIDs never collide with anybody's.

#include <QByteArray>
#include <QString>

namespace spectrum {

/// A fresh, random UID: "2.25.<decimal of a random UUID>". Thread-safe.
QString makeUid();
/// A UID derived deterministically from `name` (a name-based UUID, SHA-1, version 5): the same name gives the
/// same UID on every machine. Used for generated demo data that must be reproducible.
QString makeUidFromName(const QByteArray &name);
/// A well-formed DICOM UID (PS3.5 9.1): 1–64 characters, numeric components separated by dots, no leading zeros.
bool isValidUid(const QString &uid);

} // namespace spectrum
