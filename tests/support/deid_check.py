#!/usr/bin/python3
"""Checks a de-identified export with pydicom alone, against the attributes of PS3.15 Table E.1-1 (Basic Profile)
that the originals carried: each removed (X), emptied (Z) or a dummy (D) as the profile says; no private attribute,
overlay or curve left; every instance UID new; the pixel data unchanged; every reference inside the export resolving
to an instance of the export; and what the dataset says of its own de-identification.

usage: deid_check.py [--retain-dates] ORIGINAL:EXPORTED...
prints a JSON list of problems (empty: none) and the export's Study Instance UIDs and Patient IDs
"""
import json
import sys

import pydicom

# (tag, action) — from PS3.15 Table E.1-1, the Basic Profile column; dates and times marked T (kept with the
# Retain Longitudinal Temporal Information with Full Dates option).
RULES = {
    0x00080020: "Z T", 0x00080021: "X T", 0x00080022: "X T", 0x00080023: "Z T", 0x0008002A: "X T", 0x00080030: "Z T",
    0x00080031: "X T", 0x00080032: "X T", 0x00080033: "Z T", 0x00080012: "X T", 0x00080013: "X T",
    0x00080050: "Z", 0x00080080: "X", 0x00080081: "X", 0x00080090: "Z", 0x00080092: "X", 0x00080094: "X", 0x00081010: "X",
    0x00081030: "X", 0x0008103E: "X", 0x00081040: "X", 0x00081048: "X", 0x00081050: "X", 0x00081060: "X", 0x00081070: "X",
    0x00081080: "X", 0x00081110: "X", 0x00081111: "X", 0x00081120: "X", 0x00082111: "X", 0x00084000: "X",
    0x00100021: "X", 0x00100030: "Z", 0x00100032: "X", 0x00100040: "Z", 0x00101000: "X", 0x00101001: "X", 0x00101002: "X",
    0x00101005: "X", 0x00101010: "X", 0x00101020: "X", 0x00101030: "X", 0x00101040: "X", 0x00101060: "X", 0x00101090: "X",
    0x00102154: "X", 0x00102160: "X", 0x00102180: "X", 0x001021B0: "X", 0x00104000: "X",
    0x00181000: "X", 0x00181030: "X", 0x00184000: "X", 0x00200010: "Z", 0x00204000: "X",
    0x00321032: "X", 0x00321060: "X", 0x00324000: "X", 0x00380010: "X", 0x00400275: "X", 0x00401001: "X",
    0x0040A075: "D", 0x0040A123: "D", 0x00700084: "Z",
}
UID_TAGS = [0x00080018, 0x0020000D, 0x0020000E, 0x00200052]


def walk(ds, visit):
    for elem in ds:
        visit(elem)
        if elem.VR == "SQ":
            for item in elem.value:
                walk(item, visit)


def main():
    args = sys.argv[1:]
    retain = "--retain-dates" in args
    pairs = [a.split(":") for a in args if a != "--retain-dates"]
    problems, exported_uids, references, studies, patients = [], set(), [], set(), set()
    for original_path, exported_path in pairs:
        original = pydicom.dcmread(original_path)
        exported = pydicom.dcmread(exported_path)
        name = exported_path.rsplit("/", 1)[-1]
        present = {}
        walk(original, lambda e: present.setdefault(e.tag, e))
        for tag, rule in RULES.items():
            if tag not in present:
                continue
            action, temporal = rule.split()[0], "T" in rule
            found = []
            walk(exported, lambda e: found.append(e) if e.tag == tag else None)
            if temporal and retain:
                if not found or str(found[0].value) != str(present[tag].value):
                    problems.append(f"{name}: {pydicom.datadict.keyword_for_tag(tag)} not kept with the dates option")
                continue
            if action == "X" and found:
                problems.append(f"{name}: {pydicom.datadict.keyword_for_tag(tag)} still there")
            elif action == "Z" and any(e.value not in (None, "", []) and len(e.value) != 0 for e in found):
                problems.append(f"{name}: {pydicom.datadict.keyword_for_tag(tag)} not empty")
            elif action == "D" and any(str(e.value) not in ("ANONYMOUS", "") for e in found):
                problems.append(f"{name}: {pydicom.datadict.keyword_for_tag(tag)} still names someone: {found[0].value}")
        walk(exported, lambda e: problems.append(f"{name}: private {e.tag} left") if e.tag.is_private else None)
        # Every person's name, listed by the profile or not: none left but the dummy.
        walk(exported, lambda e: problems.append(f"{name}: {e.keyword} names {e.value}")
             if e.VR == "PN" and e.tag != 0x00100010 and str(e.value) not in ("", "ANONYMOUS") else None)
        walk(exported, lambda e: problems.append(f"{name}: overlay or curve {e.tag} left") if 0x5000 <= e.tag.group <= 0x60FF else None)
        for tag in UID_TAGS:
            if tag in original and tag in exported and original[tag].value == exported[tag].value:
                problems.append(f"{name}: {pydicom.datadict.keyword_for_tag(tag)} kept its old UID")
        if "PixelData" in original and original.PixelData != exported.PixelData:
            problems.append(f"{name}: pixel data changed")
        if exported.get("PatientIdentityRemoved") != "YES":
            problems.append(f"{name}: Patient Identity Removed is not YES")
        codes = [c.CodeValue for c in exported.get("DeidentificationMethodCodeSequence", [])]
        if "113100" not in codes or (retain and "113106" not in codes):
            problems.append(f"{name}: the de-identification method codes say {codes}")
        if str(exported.PatientName) == str(original.PatientName) or exported.PatientID == original.PatientID:
            problems.append(f"{name}: the patient's name or ID kept")
        if exported.file_meta.MediaStorageSOPInstanceUID != exported.SOPInstanceUID:
            problems.append(f"{name}: the file meta information names the old instance")
        exported_uids.add(str(exported.SOPInstanceUID))
        studies.add(str(exported.StudyInstanceUID))
        patients.add(str(exported.PatientID))
        walk(exported, lambda e: references.append((name, str(e.value))) if e.keyword == "ReferencedSOPInstanceUID" else None)
    for name, uid in references:
        if uid not in exported_uids:
            problems.append(f"{name}: refers to {uid}, which is not in the export")
    json.dump({"problems": problems, "studies": sorted(studies), "patients": sorted(patients), "references": len(references)}, sys.stdout)


if __name__ == "__main__":
    main()
