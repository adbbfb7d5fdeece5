// SPDX-License-Identifier: Apache-2.0
#pragma once
// A quick reader of a DICOM instance's identity (patient, study, series, instance) straight from the bytes of its
// header: no data dictionary, no element objects. Fetching a study indexes every instance as it arrives, and
// DCMTK's full parse (with its dictionary, loaded from a text file) cost more CPU than everything else a fetch
// does besides receiving and writing.
//
// It answers only where its answer is certainly the one DCMTK's parse gives (readIdentity in dcmtksupport.cpp):
// explicit VR little endian (native or encapsulated pixels), elements in ascending order, every length inside
// the bytes and every sequence's items filling it as DCMTK checks, single values in string VRs. Anything else —
// implicit VR (whether an element is a sequence is in the data dictionary), big endian, deflated, a multi-valued
// or odd value, anything malformed — is left to DCMTK (nullopt), which then gives the answer or the error it
// always did. tst_identityscan holds the two side by side, on damaged headers too.

#include "spectrum/core/bytes.h"
#include "spectrum/core/dicomidentity.h"
#include "spectrum/core/result.h"

#include <QtGlobal>

#include <optional>

namespace spectrum {

/// The identity of a Part 10 file whose header is certainly readable this simple way; nullopt otherwise.
std::optional<DicomIdentity> scanDicomIdentity(const char *data, qint64 size);

/// What the scanner must agree with: the identity through DCMTK's parse alone (readDicomIdentity without the
/// scanner). For tests and fuzzing.
Result<DicomIdentity> readDicomIdentityWithDcmtk(const ByteView &bytes);

} // namespace spectrum
