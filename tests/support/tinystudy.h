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
#include <utility>
#include <QStringList>

namespace spectrum::test {

/// `count` axial CT slices of 4 × 4 pixels, 1 mm apart, one study, written as files into `folder`, of patient
/// LARGE^STUDY (LARGE-1) unless `patient` (name, ID) says another. Slice k (from 0) is uniform, of stored value
/// k % 4096 (a slice told from another by its grey). `seriesCount` series: slice k in series k % seriesCount (numbered
/// from 1), so that they grow side by side as the files are sent in order.
inline QStringList writeTinyStudy(const QString &folder, int count, QString *studyUid, int seriesCount = 1,
                                  const std::pair<QString, QString> &patient = {QStringLiteral("LARGE^STUDY"), QStringLiteral("LARGE-1")})
{
    char uid[100];
    const QString study = QString::fromLatin1(dcmGenerateUniqueIdentifier(uid, SITE_STUDY_UID_ROOT));
    QStringList series;
    for (int s = 0; s < seriesCount; ++s)
        series << QString::fromLatin1(dcmGenerateUniqueIdentifier(uid, SITE_SERIES_UID_ROOT));
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
        const int inSeries = k / seriesCount;
        put(DCM_SeriesInstanceUID, series[k % seriesCount]);
        put(DCM_FrameOfReferenceUID, frame);
        put(DCM_PatientName, patient.first);
        put(DCM_PatientID, patient.second);
        put(DCM_StudyDate, QStringLiteral("20261130"));
        put(DCM_Modality, QStringLiteral("CT"));
        put(DCM_SeriesNumber, QString::number(k % seriesCount + 1));
        put(DCM_InstanceNumber, QString::number(inSeries + 1));
        put(DCM_ImagePositionPatient, QStringLiteral("0\\0\\%1").arg(inSeries));
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
