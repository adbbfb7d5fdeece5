#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Measurement reports through highdicom (PyPI; software we did not write), in the venv tests/support/pyvenv.sh makes.

usage:
  hd_report.py read REPORT.dcm
      prints, as JSON, what highdicom reads of a TID 1500 report: the planar ROI groups (TID 1410: tracking UID,
      region's graphic type and points, the image it is on, the measurements with derivation) and the image
      measurement groups (TID 1501: tracking UID and measurements)
  hd_report.py write OUT.dcm STUDY_UID SERIES_UID SOP_CLASS SOP_INSTANCE PATIENT_ID
      writes a report as another program would, on that image: a circle and a polygon region (TID 1410) with an
      area and a mean, a finding type, and a volume with no coordinates (TID 1501)
"""
import json
import sys

import highdicom as hd
import highdicom.ko  # noqa: F401 (hd.ko)
import numpy as np
from pydicom.dataset import Dataset
from pydicom.sr.codedict import codes

HU = hd.sr.CodedConcept("[hnsf'U]", "UCUM", "Hounsfield unit")
ATTENUATION = hd.sr.CodedConcept("112031", "DCM", "Attenuation Coefficient")


def measurement(m):
    return {
        "name": [m.name.value, m.name.scheme_designator, m.name.meaning],
        "value": float(m.value),
        "unit": m.unit.value,
        "derivation": m.derivation.value if m.derivation is not None else None,
    }


def read(path):
    sr = hd.sr.srread(path)
    report = hd.sr.MeasurementReport.from_sequence(sr.content)
    out = {"planar": [], "image": []}
    for g in report.get_planar_roi_measurement_groups():
        roi = g.roi
        out["planar"].append({
            "trackingId": g.tracking_identifier,
            "trackingUid": str(g.tracking_uid),
            "graphicType": roi.graphic_type.value,
            "points": [[float(x), float(y)] for x, y in roi.value],
            "sop": str(roi.ContentSequence[0].ReferencedSOPSequence[0].ReferencedSOPInstanceUID),
            "measurements": [measurement(m) for m in g.get_measurements()],
        })
    for g in report.get_image_measurement_groups():
        out["image"].append({
            "trackingId": g.tracking_identifier,
            "trackingUid": str(g.tracking_uid),
            "measurements": [measurement(m) for m in g.get_measurements()],
        })
    json.dump(out, sys.stdout)


def evidence(name, study, series, sop_class, sop_instance, patient_id):
    """The header of an image a document refers to, as highdicom takes its evidence."""
    image = Dataset()
    image.PatientName = name
    image.PatientID = patient_id
    image.PatientBirthDate = "19700101"
    image.PatientSex = "O"
    image.StudyInstanceUID = study
    image.StudyID = "1"
    image.StudyDate = "20240102"
    image.StudyTime = "093000"
    image.ReferringPhysicianName = ""
    image.AccessionNumber = "HD1"
    image.SeriesInstanceUID = series
    image.SOPClassUID = sop_class
    image.SOPInstanceUID = sop_instance
    image.Modality = "CT"
    return image


def write(out, study, series, sop_class, sop_instance, patient_id):
    image = evidence("FOREIGN^REPORT", study, series, sop_class, sop_instance, patient_id)
    source = hd.sr.SourceImageForRegion(referenced_sop_class_uid=sop_class, referenced_sop_instance_uid=sop_instance)
    circle = hd.sr.ImageRegion(graphic_type=hd.sr.GraphicTypeValues.CIRCLE,
                               graphic_data=np.array([[20.0, 20.0], [25.0, 20.0]]), source_image=source)
    polygon = hd.sr.ImageRegion(graphic_type=hd.sr.GraphicTypeValues.POLYLINE,
                                graphic_data=np.array([[4.0, 4.0], [12.0, 4.0], [12.0, 10.0], [4.0, 10.0], [4.0, 4.0]]),
                                source_image=source)
    groups = [
        hd.sr.PlanarROIMeasurementsAndQualitativeEvaluations(
            tracking_identifier=hd.sr.TrackingIdentifier(uid=hd.UID(), identifier="lesion 1"),
            referenced_region=circle,
            finding_type=codes.SCT.Nodule,
            measurements=[
                hd.sr.Measurement(name=codes.SCT.Area, value=19.63, unit=codes.UCUM.SquareMillimeter),
                hd.sr.Measurement(name=ATTENUATION, value=219.5, unit=HU, derivation=codes.SCT.Mean),
            ]),
        hd.sr.PlanarROIMeasurementsAndQualitativeEvaluations(
            tracking_identifier=hd.sr.TrackingIdentifier(uid=hd.UID(), identifier="region 2"),
            referenced_region=polygon,
            measurements=[hd.sr.Measurement(name=codes.SCT.Area, value=12.0, unit=codes.UCUM.SquareMillimeter)]),
        hd.sr.MeasurementsAndQualitativeEvaluations(
            tracking_identifier=hd.sr.TrackingIdentifier(uid=hd.UID(), identifier="volume"),
            measurements=[hd.sr.Measurement(name=codes.SCT.Volume, value=1.5, unit=hd.sr.CodedConcept("ml", "UCUM", "milliliter"))]),
    ]
    observer = hd.sr.ObserverContext(
        observer_type=codes.DCM.Person,
        observer_identifying_attributes=hd.sr.PersonObserverIdentifyingAttributes(name="Other^Reader"))
    report = hd.sr.MeasurementReport(
        observation_context=hd.sr.ObservationContext(observer_person_context=observer),
        procedure_reported=codes.LN.CTUnspecifiedBodyRegion,
        imaging_measurements=groups)
    sr = hd.sr.ComprehensiveSR(evidence=[image], content=report, series_instance_uid=hd.UID(), series_number=77,
                               sop_instance_uid=hd.UID(), instance_number=1, manufacturer="highdicom")
    sr.save_as(out)


def keys(out, title, study, series, sop_class, patient_id, *sop_instances):
    """A Key Object Selection document highdicom writes: `title` a code value of CID 7010 ("113000" Of Interest,
    "113037" Rejected for Patient Safety Reasons…), the images `sop_instances` of `series`. With ":composite" after
    the title, the images are given without their pixel attributes: highdicom then references them as COMPOSITE."""
    title, _, form = title.partition(":")
    images = []
    for sop_instance in sop_instances:
        image = evidence("FOREIGN^KEYS", study, series, sop_class, sop_instance, patient_id)
        if form != "composite":
            image.Rows, image.Columns, image.BitsAllocated, image.NumberOfFrames = 64, 48, 16, 1
        images.append(image)
    titles = {"113000": codes.DCM.OfInterest, "113037": codes.DCM.RejectedForPatientSafetyReasons}
    observer = hd.sr.ObserverContext(
        observer_type=codes.DCM.Person,
        observer_identifying_attributes=hd.sr.PersonObserverIdentifyingAttributes(name="Other^Reader"))
    content = hd.ko.KeyObjectSelection(document_title=titles[title], referenced_objects=images,
                                       observer_person_context=observer, description="chosen elsewhere")
    ko = hd.ko.KeyObjectSelectionDocument(evidence=images, content=content, series_instance_uid=hd.UID(), series_number=78,
                                          sop_instance_uid=hd.UID(), instance_number=1, manufacturer="highdicom")
    ko.save_as(out)


if __name__ == "__main__":
    if sys.argv[1] == "read":
        read(sys.argv[2])
    elif sys.argv[1] == "keys":
        keys(*sys.argv[2:])
    else:
        write(*sys.argv[2:8])
