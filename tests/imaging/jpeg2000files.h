// SPDX-License-Identifier: Apache-2.0
#pragma once
// Test files in JPEG 2000, made with OpenJPEG's own encoder (opj_compress) and wrapped as DICOM by DCMTK: an
// independent encoder for our decoder to be checked against.

#include <QString>

namespace spectrum::test {

/// `original` (a 16-bit gray DICOM file) recompressed by opj_compress into `folder`, wrapped as encapsulated DICOM
/// in fragments of `fragmentKiB` (0: one fragment). `rate` 0: lossless (.90), else that compression ratio (.91).
/// The codestream is kept beside it (same name, .j2k). Empty on failure.
QString makeJpeg2000(const QString &original, const QString &folder, int rate, int fragmentKiB);
/// The `slices` (16-bit gray DICOM files of one size) as the frames of one lossless JPEG 2000 instance in `folder`:
/// with or without a Basic Offset Table, in fragments of `fragmentKiB` (0: one per frame). Empty on failure.
QString makeMultiFrameJpeg2000(const QStringList &slices, const QString &folder, bool offsetTable, int fragmentKiB);

} // namespace spectrum::test
