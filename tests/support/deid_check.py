#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks a de-identified export against DICOM PS3.15 Table E.1-1 (Basic Profile) as transcribed by another project:
dicom-anonymizer's table of the 2026c standard (PyPI, in the test venv), not ours.

  deid_check.py plant BASE OUT
      writes BASE with every attribute of that table planted in it, at the top level and again inside an item of a
      sequence the table does not list (Shared Functional Groups Sequence), each with a value of its VR that names or
      dates something (attributes newer than pydicom's dictionary get a VR told from their name); prints
      {"planted": N, "unknown": [tags pydicom has no VR for]}.

  deid_check.py check [--retain-dates] ORIGINAL:EXPORTED...
      for every attribute of the table the originals carry, wherever they carry it, checks the exported copy at the
      same place does what the table says (X removed, Z empty, D a dummy, U a new UID — the same new UID for the same
      old one everywhere —, and the choices X/Z, X/D, Z/D, X/Z/D, X/Z/U*); dates and times kept with the Retain
      Longitudinal Temporal Information with Full Dates option; sequences the export's Clean Structured Content and
      Clean Graphics options keep (Content, Acquisition Context, Specimen Preparation, Graphic Annotation) kept with
      every attribute in them checked the same way. Then what holds for the whole export: no private attribute,
      overlay or curve, no person named, the pixel data unchanged, every reference resolving inside the export, and
      what the dataset says of its own de-identification. Prints a JSON object whose "problems" list is empty when
      all holds.
"""
import json
import re
import sys

import pydicom
from pydicom.datadict import dictionary_VR, keyword_for_tag
from pydicom.dataset import Dataset
from pydicom.sequence import Sequence
from pydicom.tag import Tag

from dicomanonymizer.dicom_anonymization_databases import dicomfields_2026c as table

CATEGORIES = ["D_TAGS", "Z_TAGS", "X_TAGS", "U_TAGS", "Z_D_TAGS", "X_Z_TAGS", "X_D_TAGS", "X_Z_D_TAGS", "X_Z_U_STAR_TAGS"]
ACTION = {}
for category in CATEGORIES:
    for entry in getattr(table, category):
        if len(entry) == 2:  # the masked entries (curves, overlays) are checked by group below
            ACTION[(entry[0] << 16) | entry[1]] = category[:-5]
# The options the export says it applies (its Deidentification Method Code Sequence says so too) keep these: the
# sequences of Clean Structured Content and Clean Graphics (cleaned attribute by attribute) and the graphics' words.
CLEANED = {0x0040A730, 0x00400555, 0x00400610, 0x00700001, 0x00700006}
# What the Retain Longitudinal Temporal Information with Full Dates option keeps: the dates and times (VR DA, DT, TM)
# but the patient's birth and GPS Time Stamp, and three that are not dates by their VR (its column in the standard).
DATES_NOT_KEPT = {0x00100030, 0x00100032, 0x00160077}
KEPT_NOT_DATES = {0x00080201, 0x00340007, 0x04000310}  # Timezone Offset From UTC, Frame Origin Timestamp, Certified Timestamp
CONTAINER = 0x52009229  # Shared Functional Groups Sequence: not in the table, so kept and its items cleaned
NAMES = {}
for line in open(table.__file__):
    found = re.match(r"\s*\(0x([0-9A-Fa-f]{4}), 0x([0-9A-Fa-f]{4})\),\s*#\s*(.*)", line)
    if found:
        NAMES[int(found.group(1) + found.group(2), 16)] = found.group(3).strip()
UID_RE = re.compile(r"^(0|[1-9][0-9]*)(\.(0|[1-9][0-9]*))*$")


def name(tag):
    return keyword_for_tag(tag) or NAMES.get(tag) or f"({tag >> 16:04X},{tag & 0xFFFF:04X})"


def planted_value(tag, vr):
    t = f"{tag:08X}"
    if vr == "SQ":
        item = Dataset()
        item.CodeValue = "ID" + t[-6:]
        item.CodingSchemeDesignator = "99PLANT"
        item.CodeMeaning = "Planted meaning " + t
        item.PersonName = "Inner^Person^" + t
        item.ReferencedSOPInstanceUID = f"2.25.7{tag}"
        return Sequence([item])
    if vr == "PN":
        return "Planted^Person^" + t
    if vr in ("DA",):
        return "19710203"
    if vr == "TM":
        return "101112"
    if vr == "DT":
        return "19710203101112"
    if vr == "AS":
        return "042Y"
    if vr in ("DS", "IS"):
        return "42"
    if vr == "UI":
        return f"2.25.9{tag}"
    if vr == "UR":
        return "http://planted.example/" + t
    if vr == "AT":
        return 0x00100010
    if vr in ("US", "SS", "UL", "SL", "FL", "FD", "SV", "UV"):
        return 42
    if vr in ("OB", "OW", "UN", "OF", "OD", "OL", "OV"):
        return b"PLANT" + bytes.fromhex(t[-6:])
    return "ID" + t  # AE CS LO LT SH ST UC UT: 10 characters, upper case


def plant(base_path, out_path):
    ds = pydicom.dcmread(base_path)
    nested = Dataset()
    planted, unknown = 0, []
    for tag in sorted(ACTION):
        if tag >> 16 in (0x0000, 0x0002) or tag in (0xFFFAFFFA, 0xFFFCFFFC):
            continue  # command and file meta groups; signatures and padding are not attributes of a dataset's body
        try:
            vr = dictionary_VR(tag).split(" ")[0]
        except KeyError:  # newer than pydicom's dictionary: its VR told from its name in the table
            unknown.append(f"{tag:08X}")
            vr = "SQ" if NAMES[tag].endswith("Sequence") else "DT" if NAMES[tag].endswith("DateTime") else "LO"
        value = planted_value(tag, vr)
        if tag not in ds:
            ds.add_new(tag, vr, value)
            planted += 1
        nested.add_new(tag, vr, planted_value(tag, vr))
    ds.add_new(CONTAINER, "SQ", Sequence([nested]))
    # The table's masked entries: a curve and an overlay's comments and data.
    ds.add_new(0x50000005, "US", 2)
    ds.add_new(0x50003000, "OB", b"\x01\x02")
    ds.add_new(0x60004000, "LT", "overlay of Planted^Person")
    ds.add_new(0x60003000, "OW", b"\x00\x01")
    ds.save_as(out_path, write_like_original=False)
    json.dump({"planted": planted, "unknown": unknown}, sys.stdout)


def walk(ds, visit, path=()):
    for elem in ds:
        visit(path, elem)
        if elem.VR == "SQ":
            for i, item in enumerate(elem.value):
                walk(item, visit, path + ((int(elem.tag), i),))


def at(ds, path, tag):
    """The element at `path`, tag, in ds; None if it or a sequence on the way is gone."""
    for seq_tag, index in path:
        if seq_tag not in ds or len(ds[seq_tag].value) <= index:
            return None
        ds = ds[seq_tag].value[index]
    return ds[tag] if tag in ds else None


def item_kept(ds, path):
    """Whether the item at the end of `path` is still there (a sequence on the way may be removed or emptied, as the
    table says of it: then what was inside is gone with it)."""
    if not path:
        return True
    seq = at(ds, path[:-1], path[-1][0])
    return seq is not None and len(seq.value) > path[-1][1]


def empty(elem):
    return elem.value is None or (not isinstance(elem.value, (int, float)) and len(elem.value) == 0)


def check_attribute(where, action, original, exported, retain, uid_map, problems):
    tag = int(original.tag)
    what = f"{where}{name(tag)}"
    changed = exported is not None and (exported.VR == "SQ" or str(exported.value) != str(original.value))
    if retain and ((original.VR in ("DA", "DT", "TM") and tag not in DATES_NOT_KEPT) or tag in KEPT_NOT_DATES):
        if exported is None or str(exported.value) != str(original.value):
            problems.append(f"{what}: not kept with the dates option")
        return
    if tag in CLEANED:
        if exported is None or len(exported.value) != len(original.value):
            problems.append(f"{what}: the option keeps it, but it is not kept")
        return
    if action == "X":
        ok = exported is None
    elif action == "Z":
        ok = exported is not None and empty(exported)
    elif action == "D":
        ok = exported is not None and not empty(exported) and (changed or empty(original))
    elif action == "U":
        ok = exported is not None and changed and all(UID_RE.match(u) for u in str(exported.value).split("\\"))
        if ok:
            for old, new in zip(str(original.value).split("\\"), str(exported.value).split("\\")):
                if uid_map.setdefault(old, new) != new:
                    problems.append(f"{what}: {old} became {new} here and {uid_map[old]} elsewhere")
    elif action == "Z_D":
        ok = exported is not None and (empty(exported) or changed)
    elif action == "X_Z":
        ok = exported is None or empty(exported)
    elif action == "X_D":
        ok = exported is None or (not empty(exported) and changed)
    elif action == "X_Z_D":
        ok = exported is None or empty(exported) or changed
    elif action == "X_Z_U_STAR":
        ok = exported is None or empty(exported) or exported.VR == "SQ" or changed
    else:
        ok = False
    if ok and action in ("D", "Z_D", "X_D", "X_Z_D") and original.VR == "SQ" and exported is not None:
        # A sequence replaced by a dummy: nothing in it keeps its value (but the codes' and classes' UIDs, and the
        # dates the option keeps).
        for original_item, exported_item in zip(original.value, exported.value):
            inner = []
            walk(original_item, lambda path, e: inner.append((path, e)))
            for path, e in inner:
                if e.VR in ("SQ", "UI") or empty(e) or (retain and e.VR in ("DA", "DT", "TM")):
                    continue
                now = at(exported_item, path, e.tag)
                if now is not None and str(now.value) == str(e.value):
                    problems.append(f"{what}: {name(int(e.tag))} inside kept its value {repr(e.value)[:40]}")
    if not ok:
        shown = "gone" if exported is None else repr(exported.value)[:60]
        problems.append(f"{what}: {action} in the table, but {shown} (was {repr(original.value)[:60]})")


def check(args):
    retain = "--retain-dates" in args
    pairs = [a.split(":") for a in args if a != "--retain-dates"]
    problems, studies, patients, uid_map = [], set(), set(), {}
    checked, references = 0, 0
    loaded = [(pydicom.dcmread(o), pydicom.dcmread(e), e.rsplit("/", 1)[-1]) for o, e in pairs]
    new_instance = {str(o.SOPInstanceUID): str(e.SOPInstanceUID) for o, e, _ in loaded}
    for original, exported, file in loaded:
        seen = []
        walk(original, lambda path, e: seen.append((path, e)) if int(e.tag) in ACTION else None)
        for path, elem in seen:
            if not path and int(elem.tag) in (0x00100010, 0x00100020):
                continue  # the patient's name and ID: the export's own, checked below
            if not item_kept(exported, path):
                continue
            where = f"{file}: " + "".join(f"{name(t)}[{i}]." for t, i in path)
            check_attribute(where, ACTION[int(elem.tag)], elem, at(exported, path, elem.tag), retain, uid_map, problems)
            checked += 1
            # A reference to an instance of the export resolves to that instance's new UID.
            if elem.keyword == "ReferencedSOPInstanceUID" and str(elem.value) in new_instance:
                references += 1
                now = at(exported, path, elem.tag)
                if now is None or str(now.value) != new_instance[str(elem.value)]:
                    problems.append(f"{where}ReferencedSOPInstanceUID: no longer refers to the exported instance")
        if CONTAINER in original and CONTAINER not in exported:
            problems.append(f"{file}: the sequence the table does not list is gone, and what was planted in it unchecked")
        walk(exported, lambda p, e: problems.append(f"{file}: private {e.tag} left") if e.tag.is_private else None)
        walk(exported, lambda p, e: problems.append(f"{file}: overlay or curve {e.tag} left")
             if 0x5000 <= e.tag.group <= 0x50FF or 0x6000 <= e.tag.group <= 0x60FF else None)
        # Every person's name, listed by the table or not: none left but the dummy.
        walk(exported, lambda p, e: problems.append(f"{file}: {e.keyword} names {e.value}")
             if e.VR == "PN" and e.tag != 0x00100010 and str(e.value) not in ("", "ANONYMOUS") else None)
        # Free text kept (report texts, annotation words): the patient's name and ID not in it as words.
        words = [w for w in re.split(r"[\^=\s,]+", str(original.get("PatientName", ""))) if len(w) >= 3]
        words += [str(original.PatientID)] if len(str(original.get("PatientID", ""))) >= 3 else []
        def names_patient(p, e):
            if e.keyword in ("TextValue", "UnformattedTextValue"):
                for w in words:
                    if re.search(r"(?<!\w)" + re.escape(w) + r"(?!\w)", str(e.value), re.IGNORECASE):
                        problems.append(f"{file}: {e.keyword} still names the patient ({w}): {e.value}")
        walk(exported, names_patient)
        if "PixelData" in original and original.PixelData != exported.PixelData:
            problems.append(f"{file}: pixel data changed")
        if exported.get("PatientIdentityRemoved") != "YES":
            problems.append(f"{file}: Patient Identity Removed is not YES")
        codes = [c.CodeValue for c in exported.get("DeidentificationMethodCodeSequence", [])]
        wanted = {"113100", "113103", "113104"} | ({"113106"} if retain else set())
        if not wanted <= set(codes):
            problems.append(f"{file}: the de-identification method codes say {codes}")
        if str(exported.PatientName) == str(original.PatientName) or exported.PatientID == original.PatientID:
            problems.append(f"{file}: the patient's name or ID kept")
        if exported.file_meta.MediaStorageSOPInstanceUID != exported.SOPInstanceUID:
            problems.append(f"{file}: the file meta information names the old instance")
        studies.add(str(exported.StudyInstanceUID))
        patients.add(str(exported.PatientID))
    json.dump({"problems": problems, "checked": checked, "studies": sorted(studies), "patients": sorted(patients),
               "references": references}, sys.stdout)


def main():
    if sys.argv[1] == "plant":
        plant(sys.argv[2], sys.argv[3])
    else:
        check(sys.argv[2:])


if __name__ == "__main__":
    main()
