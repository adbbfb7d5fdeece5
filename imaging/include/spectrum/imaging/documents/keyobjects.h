// SPDX-License-Identifier: Apache-2.0
#pragma once
// Key images as a DICOM Key Object Selection document (KOS, modality KO; PS3.3 A.35.4, TID 2010): the images (and
// frames) a reader marked, under a title ("Of Interest", or another of CID 7010: "For Teaching", "Rejected for
// Quality Reasons"…) with an optional note — the form other viewers (Weasis, most PACS) show as key images. Written
// as a new instance of the images' study; read back from ours and other software's.

#include "spectrum/core/bytes.h"
#include "spectrum/core/dicomidentity.h"
#include "spectrum/core/result.h"
#include "spectrum/imaging/tools/annotation.h"

namespace spectrum {

/// The document titles written here (CID 7010).
enum class KeyObjectTitle {
    OfInterest,                  ///< 113000: key images
    RejectedForQualityReasons,   ///< 113001: a rejection note (IHE IOCM): the instances it lists are withdrawn
};

struct KeyObjectRequest
{
    DicomIdentity study;         ///< patient and study of the images
    KeyObjectTitle title = KeyObjectTitle::OfInterest;
    QList<ImageRef> images;      ///< with their series and SOP classes; a frame names one frame of a multi-frame image
    /// Instances that are not images (other documents: a rejection note's), written as COMPOSITE references.
    QList<ImageRef> documents;
    QString description;         ///< the note (Key Object Description), up to 1024 characters; empty: none
    QString observerName;        ///< who selected them (DICOM PN); empty: not recorded
    QString seriesInstanceUid;   ///< empty: a new series
    int seriesNumber = 0;        ///< 0: 9002
    QString seriesDescription;   ///< empty: "Spectrum key images"
};

/// A Part 10 Key Object Selection document of `request`, with a new SOP Instance UID. The frames of one multi-frame
/// image are one reference with their frame numbers. InvalidArgument when a reference is of another study or names no
/// SOP class, or when it references nothing.
Result<QByteArray> writeKeyObjectSelection(const KeyObjectRequest &request);

struct KeyObjectSelection
{
    DicomIdentity identity;      ///< the document's patient, study, series and instance
    QString title;               ///< the document title's meaning ("Of Interest")
    QString titleCode;           ///< its code value ("113000")
    QString description;
    QString observerName;
    QString contentDateTime;     ///< YYYYMMDDHHMMSS
    QList<ImageRef> images;      ///< in the document's order; one per frame named (frame 0: the whole image)
    QList<ImageRef> documents;   ///< COMPOSITE references (other documents), with their series when the evidence says
    QStringList notShown;        ///< references that are not images (waveforms, other documents), listed

    /// A rejection note (IHE IOCM: Rejected for Quality Reasons, for Patient Safety Reasons, Incorrect Modality
    /// Worklist Entry, Data Retention Policy Expired): its references are withdrawn, not key images.
    bool isRejectionNote() const;
};

/// Reads a Key Object Selection document. InvalidDicom when `bytes` are not one.
Result<KeyObjectSelection> readKeyObjectSelection(const ByteView &bytes);

} // namespace spectrum
