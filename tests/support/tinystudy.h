// SPDX-License-Identifier: Apache-2.0
#pragma once
// A study of many tiny CT slices (4 × 4 pixels) written with DCMTK: the large-study tests stream thousands of
// instances in seconds.

#include <dcmtk/dcmdata/dcdeftag.h>
#include <dcmtk/dcmdata/dcfilefo.h>
#include <dcmtk/dcmdata/dcuid.h>

#include <QString>

#include <algorithm>
#include <iterator>
#include <QStringList>

namespace spectrum::test {

/// `count` axial CT slices of 4 × 4 pixels, 1 mm apart, one study and series, written as files into `folder`.
/// Slice k (from 0) is uniform, of stored value k % 4096 (a slice told from another by its grey).
inline QStringList writeTinyStudy(const QString &folder, int count, QString *studyUid)
{
    char uid[100];
    const QString study = QString::fromLatin1(dcmGenerateUniqueIdentifier(uid, SITE_STUDY_UID_ROOT));
    const QString series = QString::fromLatin1(dcmGenerateUniqueIdentifier(uid, SITE_SERIES_UID_ROOT));
    const QString frame = QString::fromLatin1(dcmGenerateUniqueIdentifier(uid));
    *studyUid = study;
    QStringList files;
    for (int k = 0; k < count; ++k) {
        Uint16 pixels[16];
        std::fill(std::begin(pixels), std::end(pixels), Uint16(k % 4096));
        DcmFileFormat ff;
        DcmDataset *ds = ff.getDataset();
        auto put = [ds](const DcmTagKey &tag, const QString &value) { ds->putAndInsertString(tag, value.toLatin1().constData()); };
        put(DCM_SOPClassUID, QString::fromLatin1(UID_CTImageStorage));
        put(DCM_SOPInstanceUID, QString::fromLatin1(dcmGenerateUniqueIdentifier(uid, SITE_INSTANCE_UID_ROOT)));
        put(DCM_StudyInstanceUID, study);
        put(DCM_SeriesInstanceUID, series);
        put(DCM_FrameOfReferenceUID, frame);
        put(DCM_PatientName, QStringLiteral("LARGE^STUDY"));
        put(DCM_PatientID, QStringLiteral("LARGE-1"));
        put(DCM_StudyDate, QStringLiteral("20261130"));
        put(DCM_Modality, QStringLiteral("CT"));
        put(DCM_SeriesNumber, QStringLiteral("1"));
        put(DCM_InstanceNumber, QString::number(k + 1));
        put(DCM_ImagePositionPatient, QStringLiteral("0\\0\\%1").arg(k));
        put(DCM_ImageOrientationPatient, QStringLiteral("1\\0\\0\\0\\1\\0"));
        put(DCM_PixelSpacing, QStringLiteral("1\\1"));
        put(DCM_RescaleIntercept, QStringLiteral("-1024"));
        put(DCM_RescaleSlope, QStringLiteral("1"));
        put(DCM_PhotometricInterpretation, QStringLiteral("MONOCHROME2"));
        ds->putAndInsertUint16(DCM_SamplesPerPixel, 1);
        ds->putAndInsertUint16(DCM_Rows, 4);
        ds->putAndInsertUint16(DCM_Columns, 4);
        ds->putAndInsertUint16(DCM_BitsAllocated, 16);
        ds->putAndInsertUint16(DCM_BitsStored, 12);
        ds->putAndInsertUint16(DCM_HighBit, 11);
        ds->putAndInsertUint16(DCM_PixelRepresentation, 0);
        ds->putAndInsertUint16Array(DCM_PixelData, pixels, 16);
        const QString path = QStringLiteral("%1/%2.dcm").arg(folder).arg(k, 5, 10, QLatin1Char('0'));
        if (ff.saveFile(path.toLocal8Bit().constData(), EXS_LittleEndianExplicit).bad())
            return {};
        files << path;
    }
    return files;
}

} // namespace spectrum::test
