#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Reads a DICOM Structured Report with pydicom alone (software we did not write) and prints, as JSON, what a
measurement report says: per Measurement Group (125007, DCM) its tracking identifier and UID, its numeric values
(concept, derivation, value, unit) and every spatial coordinate under the group (graphic type, data, the image it
is selected from: SOP Instance UID and frames). Also the evidence list and the patient and study.

usage: sr_read.py REPORT.dcm
"""
import json
import sys

import pydicom


def code(seq):
    if not seq:
        return None
    item = seq[0]
    return [str(item.CodeValue), str(item.CodingSchemeDesignator), str(item.CodeMeaning)]


def scoords_and_nums(items, out):
    for item in items:
        vt = item.ValueType
        concept = code(item.get("ConceptNameCodeSequence"))
        children = item.get("ContentSequence", [])
        if vt == "SCOORD":
            image = next((c for c in children if c.ValueType == "IMAGE"), None)
            ref = image.ReferencedSOPSequence[0] if image is not None else None
            out["scoords"].append({
                "concept": concept,
                "relationship": str(item.RelationshipType),
                "type": str(item.GraphicType),
                "data": [float(v) for v in item.GraphicData],
                "sop": str(ref.ReferencedSOPInstanceUID) if ref is not None else None,
                "sopClass": str(ref.ReferencedSOPClassUID) if ref is not None else None,
                "frames": [int(f) for f in (ref.get("ReferencedFrameNumber") or [])] if ref is not None and "ReferencedFrameNumber" in ref else [],
            })
        elif vt == "NUM":
            mv = item.MeasuredValueSequence[0]
            derivation = next((code(c.ConceptCodeSequence) for c in children
                               if c.ValueType == "CODE" and code(c.ConceptNameCodeSequence)[0] == "121401"), None)
            out["nums"].append({
                "concept": concept,
                "derivation": derivation,
                "value": float(mv.NumericValue),
                "unit": code(mv.MeasurementUnitsCodeSequence),
            })
        elif vt == "TEXT" and concept and concept[0] == "121106":
            out["comments"].append(str(item.TextValue))
        scoords_and_nums(children, out)


def main():
    ds = pydicom.dcmread(sys.argv[1])
    report = {
        "sopClass": str(ds.SOPClassUID),
        "modality": str(ds.Modality),
        "patientName": str(ds.PatientName),
        "patientId": str(ds.PatientID),
        "studyUid": str(ds.StudyInstanceUID),
        "title": code(ds.ConceptNameCodeSequence),
        "template": str(ds.ContentTemplateSequence[0].TemplateIdentifier) if "ContentTemplateSequence" in ds else None,
        "evidence": [str(i.ReferencedSOPInstanceUID)
                     for s in ds.get("CurrentRequestedProcedureEvidenceSequence", [])
                     for r in s.ReferencedSeriesSequence for i in r.ReferencedSOPSequence],
        "groups": [],
        # The root's own image references and words (a Key Object Selection's key images and note).
        "images": [{"sop": str(i.ReferencedSOPSequence[0].ReferencedSOPInstanceUID),
                    "sopClass": str(i.ReferencedSOPSequence[0].ReferencedSOPClassUID),
                    "frames": [int(f) for f in (i.ReferencedSOPSequence[0].get("ReferencedFrameNumber") or [])]}
                   for i in ds.ContentSequence if i.ValueType == "IMAGE"],
        "texts": [str(i.TextValue) for i in ds.ContentSequence if i.ValueType == "TEXT"],
    }

    def walk(items):
        for item in items:
            concept = code(item.get("ConceptNameCodeSequence"))
            children = item.get("ContentSequence", [])
            if item.ValueType == "CONTAINER" and concept and concept[0] == "125007":
                group = {"trackingId": None, "trackingUid": None, "scoords": [], "nums": [], "comments": []}
                for c in children:
                    cc = code(c.get("ConceptNameCodeSequence"))
                    if cc and cc[0] == "112039":
                        group["trackingId"] = str(c.TextValue)
                    if cc and cc[0] == "112040":
                        group["trackingUid"] = str(c.UID)
                scoords_and_nums(children, group)
                report["groups"].append(group)
            else:
                walk(children)

    walk(ds.ContentSequence)
    json.dump(report, sys.stdout)


if __name__ == "__main__":
    main()
