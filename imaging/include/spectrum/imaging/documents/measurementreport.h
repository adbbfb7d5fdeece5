// SPDX-License-Identifier: Apache-2.0
#pragma once
// Findings as a DICOM Structured Report, both ways.
//
// Written: a Comprehensive SR of the Measurement Report template (TID 1500, "Imaging Measurement Report"): the
// observer, the images measured (Image Library), and one Measurement Group per finding with its Tracking Identifier
// and Tracking Unique Identifier; lengths, axes and angles as NUMs (UCUM units, SNOMED CT / DCM concepts) inferred
// from the SCOORD they were measured on, regions as the group's Image Region SCOORD with their area and statistics
// (Derivation: mean, standard deviation, minimum, maximum of the modality quantity), arrows and text as a Comment
// inferred from their SCOORD; every SCOORD selected from its image by SOP Instance UID (and frame). The report is a
// new instance of the images' study (new series), listing them as Current Requested Procedure Evidence.
//
// Read: any Basic, Enhanced or Comprehensive SR — ours, highdicom's, OHIF's, DCMTK's examples. Every SCOORD with an
// image becomes a finding drawn on that image, its kind told from what it measures (a NUM "Length" on a two-point
// polyline is a distance, a group's closed polyline a region…) and the values of its group listed as written.
// What cannot be drawn (3-D coordinates, a SCOORD with no image, values with no coordinates) is listed, never dropped.

#include "spectrum/core/bytes.h"
#include "spectrum/core/dicomidentity.h"
#include "spectrum/core/result.h"
#include "spectrum/imaging/tools/annotation.h"

namespace spectrum {

/// A finding as a report carries it.
struct ReportedFinding
{
    Annotation annotation;
    ImageRef image;
    QList<MeasuredValue> values;  ///< written: as measured; read: those the reader recognises
    QString label;                ///< the Tracking Identifier ("Distance 1", or the reader's words)
    QStringList otherValues;      ///< read back: values of the group not among Quantity ("Volume 12.3 ml")
};

struct MeasurementReportRequest
{
    DicomIdentity study;          ///< patient and study of the images (series and instance fields unused)
    QList<ReportedFinding> findings;
    QString observerName;         ///< the reading physician, DICOM PN; empty: not recorded
    QString seriesInstanceUid;    ///< empty: a new series
    int seriesNumber = 0;         ///< 0: 9001
    int instanceNumber = 1;
    QString seriesDescription;    ///< empty: "Spectrum findings"
};

/// A Part 10 Comprehensive SR (explicit VR little endian) of `request`, with a new SOP Instance UID; the
/// findings' tracking UIDs are made when empty. InvalidArgument when a finding lies on an image of another study,
/// is not well formed, or names no image.
Result<QByteArray> writeMeasurementReport(const MeasurementReportRequest &request);

struct ReadReport
{
    DicomIdentity identity;       ///< the report's patient, study, series and instance
    QString title;                ///< the document title's meaning ("Imaging Measurement Report")
    QString templateId;           ///< the root's template ("1500"), when it says
    QString observerName;
    QString contentDateTime;      ///< YYYYMMDDHHMMSS
    QString completion;           ///< "COMPLETE" / "PARTIAL"
    QString verification;         ///< "VERIFIED" / "UNVERIFIED"
    QList<ReportedFinding> findings;
    QStringList notShown;         ///< what the report holds that is not drawn, and why, one line each
};

/// Reads a Structured Report. InvalidDicom when `bytes` are not one.
Result<ReadReport> readStructuredReport(const ByteView &bytes);

} // namespace spectrum
