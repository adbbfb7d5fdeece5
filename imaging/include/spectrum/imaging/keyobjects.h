#pragma once
// Key images as a DICOM Key Object Selection document (KOS, modality KO; PS3.3 A.35.4, TID 2010): the images (and
// frames) a reader marked, under a title ("Of Interest", or another of CID 7010: "For Teaching", "Rejected for
// Quality Reasons"…) with an optional note — the form other viewers (Weasis, most PACS) show as key images. Written
// as a new instance of the images' study; read back from ours and other software's.

#include "spectrum/core/bytes.h"
#include "spectrum/core/dicomidentity.h"
#include "spectrum/core/result.h"
#include "spectrum/imaging/annotation.h"

namespace spectrum {

struct KeyObjectRequest
{
    DicomIdentity study;         ///< patient and study of the images
    QList<ImageRef> images;      ///< with their series and SOP classes; a frame names one frame of a multi-frame image
    QString description;         ///< the note (Key Object Description), up to 1024 characters; empty: none
    QString observerName;        ///< who selected them (DICOM PN); empty: not recorded
    QString seriesInstanceUid;   ///< empty: a new series
    int seriesNumber = 0;        ///< 0: 9002
    QString seriesDescription;   ///< empty: "Spectrum key images"
};

/// A Part 10 Key Object Selection document of `request` ("Of Interest"), with a new SOP Instance UID. The frames of
/// one multi-frame image are one reference with their frame numbers. InvalidArgument when an image is of another
/// study or names no SOP class.
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
    QStringList notShown;        ///< references that are not images (waveforms, other documents), listed
};

/// Reads a Key Object Selection document. InvalidDicom when `bytes` are not one.
Result<KeyObjectSelection> readKeyObjectSelection(const ByteView &bytes);

} // namespace spectrum
