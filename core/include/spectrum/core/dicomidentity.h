#pragma once
// Who and what a DICOM instance is: patient, study, series and instance identity plus the few descriptive
// attributes a study list shows. Every store indexes it; queries match on it. A plain value type.

#include <QJsonObject>
#include <QMetaType>
#include <QString>

namespace spectrum {

struct DicomIdentity
{
    // Patient
    QString patientName;       ///< as DICOM PN, components separated by '^'
    QString patientId;
    QString issuerOfPatientId; ///< who assigned the Patient ID (0010,0021); empty when the archive does not say
    QString patientBirthDate;  ///< YYYYMMDD
    QString patientSex;
    // Study
    QString studyInstanceUid;
    QString studyDate;         ///< YYYYMMDD
    QString studyTime;
    QString studyDescription;
    QString accessionNumber;
    // Series
    QString seriesInstanceUid;
    QString modality;
    QString seriesDescription;
    QString bodyPartExamined;  ///< CS, "HEAD", "CHEST"…; empty when not recorded
    int seriesNumber = 0;
    // Instance
    QString sopInstanceUid;
    QString sopClassUid;
    int instanceNumber = 0;

    bool isValid() const { return !sopInstanceUid.isEmpty() && !studyInstanceUid.isEmpty(); }

    QJsonObject toJson() const;
    static DicomIdentity fromJson(const QJsonObject &json);

    /// "Doe, John" from "Doe^John^^^".
    /// "20240102" → "2024-01-02" (ISO, unambiguous in every locale); anything else as it is.
    static QString displayDate(const QString &dicomDate);
    static QString displayName(const QString &personName);

    friend bool operator==(const DicomIdentity &a, const DicomIdentity &b);
    friend bool operator!=(const DicomIdentity &a, const DicomIdentity &b) { return !(a == b); }
};

} // namespace spectrum

Q_DECLARE_METATYPE(spectrum::DicomIdentity)
