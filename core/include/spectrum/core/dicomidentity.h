// SPDX-License-Identifier: Apache-2.0
#pragma once
// Who and what a DICOM instance is: patient, study, series and instance identity plus the few descriptive
// attributes a study list shows. Every store indexes it; queries match on it. A plain value type.

#include <QJsonObject>
#include <QMetaType>
#include <QString>

#include <vector>

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
    QString viewPosition;      ///< CS, a projection's view: "PA", "AP", "LL"…; empty when not recorded
    // Image (what hanging protocols place series by, known without decoding the pixels)
    QString imageOrientation;  ///< Image Orientation (Patient), six numbers "1\0\0\0\1\0" (10 significant digits); empty when absent or unusual
    QString sliceThickness;    ///< Slice Thickness in mm (10 significant digits); empty when absent
    QString imagePosition;     ///< Image Position (Patient), three numbers in mm (10 significant digits); empty when absent or unusual
    QString frameOfReferenceUid;
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
    /// A description as people write it, for display only: a number with a computed tail (five decimals or more)
    /// rounded to two, trailing zeros dropped ("Axial 0.8333333333 mm" → "Axial 0.83 mm"; "0.625" as it is; never
    /// a value made zero); everything else as it is.
    static QString displayDescription(const QString &description);
    /// Numbers as imageOrientation and sliceThickness hold them: 10 significant digits, '\\' between.
    static QString formatDecimals(const std::vector<double> &values);
    /// "Axial", "Coronal", "Sagittal" or "Oblique" from imageOrientation (the plane the slice normal is nearest
    /// to, within 10°); empty without one. With `nearest`, never "Oblique": the plane it is nearest to (a
    /// gantry-tilted head CT is still its axial series).
    static QString planeOf(const QString &imageOrientation, bool nearest = false);

    friend bool operator==(const DicomIdentity &a, const DicomIdentity &b);
    friend bool operator!=(const DicomIdentity &a, const DicomIdentity &b) { return !(a == b); }
};

} // namespace spectrum

Q_DECLARE_METATYPE(spectrum::DicomIdentity)
