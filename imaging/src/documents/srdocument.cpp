// SPDX-License-Identifier: Apache-2.0
#include "documents/srdocument.h"

namespace spectrum::srdoc {

OFString ascii(const QString &s)
{
    return OFString(s.toLatin1().constData());
}

Result<Encoder> startDocument(DSRDocument &doc, const DicomIdentity &study, QStringList texts, const QString &seriesDescription, int seriesNumber,
                              int instanceNumber)
{
    texts << study.patientName << study.patientId << study.issuerOfPatientId << study.studyDescription << study.accessionNumber << seriesDescription;
    const bool latin1 = std::all_of(texts.begin(), texts.end(), [](const QString &s) {
        return std::all_of(s.begin(), s.end(), [](QChar c) { return c.unicode() <= 0xFF; });
    });
    const Encoder encode{!latin1};
    doc.setSpecificCharacterSetType(encode.utf8 ? DSRTypes::CS_UTF8 : DSRTypes::CS_Latin1);
    if (doc.createNewSeriesInStudy(ascii(study.studyInstanceUid)).bad())
        return Error(ErrorCode::InvalidArgument, QStringLiteral("'%1' is not a usable study UID").arg(study.studyInstanceUid));
    doc.setPatientName(encode(study.patientName), OFFalse);
    doc.setPatientID(encode(study.patientId), OFFalse);
    doc.setIssuerOfPatientID(encode(study.issuerOfPatientId), OFFalse);
    doc.setPatientBirthDate(ascii(study.patientBirthDate), OFFalse);
    doc.setPatientSex(ascii(study.patientSex), OFFalse);
    doc.setStudyDate(ascii(study.studyDate), OFFalse);
    doc.setStudyTime(ascii(study.studyTime), OFFalse);
    doc.setStudyDescription(encode(study.studyDescription), OFFalse);
    doc.setAccessionNumber(encode(study.accessionNumber), OFFalse);
    doc.setSeriesDescription(encode(seriesDescription.left(64)), OFFalse);
    doc.setSeriesNumber(OFString(QByteArray::number(seriesNumber).constData()));
    doc.setInstanceNumber(OFString(QByteArray::number(std::max(1, instanceNumber)).constData()));
    doc.setManufacturer("Spectrum");
    doc.setSoftwareVersions("Spectrum");
    return encode;
}

} // namespace spectrum::srdoc
