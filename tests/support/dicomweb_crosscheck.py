# SPDX-License-Identifier: Apache-2.0
"""Holds what Spectrum's DICOMweb client made of an archive against what dicomweb-client (PyPI, not ours) makes
of the same archive (tst_dicomweb). Spectrum's side comes as a folder: `answers.json` (its QIDO-RS records, study,
series and instance level, as DicomIdentity JSON with the counts) and one Part 10 file per instance it retrieved
by WADO-RS (any name). dicomweb-client searches and retrieves the same; every study, series and instance must be there on
both sides with the same values (names in any alphabet, dates, counts, modalities), and every instance the same
data set, pixels included. Prints one line per disagreement and exits 1 if there is one; else prints a summary.

usage: dicomweb_crosscheck.py URL USER PASSWORD FOLDER"""
import json
import sys
from pathlib import Path

import pydicom
import requests
from dicomweb_client.api import DICOMwebClient


def value(record, tag, default=""):
    """The first value of `tag` in a DICOM JSON record, as text; a person name as Spectrum keeps it (its
    alphabetic, ideographic and phonetic groups joined by '=', trailing empty components and groups left off, as
    PS3.5 6.2 allows: "^" is an empty group)."""
    element = record.get(tag, {})
    values = element.get("Value", [])
    if not values:
        return default
    first = values[0]
    if isinstance(first, dict):  # PN
        groups = [first.get(k, "").rstrip("^") for k in ("Alphabetic", "Ideographic", "Phonetic")]
        while groups and not groups[-1]:
            groups.pop()
        return "=".join(groups)
    return str(first)


def main():
    url, user, password, folder = sys.argv[1:5]
    folder = Path(folder)
    ours = json.loads((folder / "answers.json").read_text(encoding="utf-8"))
    our_files = {pydicom.dcmread(p, stop_before_pixels=True).SOPInstanceUID: p for p in folder.glob("*.dcm")}
    session = requests.Session()
    session.auth = (user, password)
    client = DICOMwebClient(url=url, session=session)
    problems = []

    def agree(what, field, theirs, mine):
        if str(theirs) != str(mine):
            problems.append(f"{what}: {field} is {theirs!r} for dicomweb-client, {mine!r} for Spectrum")

    studies = client.search_for_studies(fields=["StudyDescription", "ModalitiesInStudy", "NumberOfStudyRelatedSeries", "NumberOfStudyRelatedInstances"])
    our_studies = {s["studyInstanceUid"]: s for s in ours["studies"]}
    agree("the archive", "the number of studies", len(studies), len(our_studies))
    instances_checked = 0
    for study in studies:
        uid = value(study, "0020000D")
        mine = our_studies.get(uid)
        if mine is None:
            problems.append(f"study {uid}: listed by dicomweb-client, not by Spectrum")
            continue
        what = f"study {uid}"
        agree(what, f"patient name (the server's: {json.dumps(study.get('00100010', {}), ensure_ascii=False)})", value(study, "00100010"),
              mine.get("patientName", ""))
        agree(what, "patient ID", value(study, "00100020"), mine.get("patientId", ""))
        agree(what, "study date", value(study, "00080020"), mine.get("studyDate", ""))
        agree(what, "study description", value(study, "00081030"), mine.get("studyDescription", ""))
        agree(what, "accession number", value(study, "00080050"), mine.get("accessionNumber", ""))
        agree(what, "modalities", sorted(study.get("00080061", {}).get("Value", [])), sorted(mine.get("modalities", [])))
        agree(what, "related series", value(study, "00201206", "-1"), mine.get("relatedSeries", -1))
        agree(what, "related instances", value(study, "00201208", "-1"), mine.get("relatedInstances", -1))

        series_list = client.search_for_series(study_instance_uid=uid, fields=["NumberOfSeriesRelatedInstances"])
        our_series = {s["seriesInstanceUid"]: s for s in ours["series"] if s["studyInstanceUid"] == uid}
        agree(what, "the number of series", len(series_list), len(our_series))
        for series in series_list:
            suid = value(series, "0020000E")
            smine = our_series.get(suid)
            if smine is None:
                problems.append(f"series {suid}: listed by dicomweb-client, not by Spectrum")
                continue
            swhat = f"series {suid}"
            agree(swhat, "modality", value(series, "00080060"), smine.get("modality", ""))
            agree(swhat, "series number", value(series, "00200011", "0"), smine.get("seriesNumber", 0))
            agree(swhat, "related instances", value(series, "00201209", "-1"), smine.get("relatedInstances", -1))

        instances = client.search_for_instances(study_instance_uid=uid)
        our_instances = {i["sopInstanceUid"]: i for i in ours["instances"] if i["studyInstanceUid"] == uid}
        agree(what, "the number of instances", len(instances), len(our_instances))
        for instance in instances:
            iuid = value(instance, "00080018")
            imine = our_instances.get(iuid)
            if imine is None:
                problems.append(f"instance {iuid}: listed by dicomweb-client, not by Spectrum")
                continue
            agree(f"instance {iuid}", "SOP class", value(instance, "00080016"), imine.get("sopClassUid", ""))
            agree(f"instance {iuid}", "instance number", value(instance, "00200013", "0"), imine.get("instanceNumber", 0))

        # The data sets: what dicomweb-client retrieves against what Spectrum retrieved, element by element.
        for theirs in client.retrieve_study(uid):
            iuid = theirs.SOPInstanceUID
            path = our_files.get(iuid)
            if path is None:
                problems.append(f"instance {iuid}: retrieved by dicomweb-client, not by Spectrum")
                continue
            mine = pydicom.dcmread(path)
            instances_checked += 1
            if mine.file_meta.TransferSyntaxUID != theirs.file_meta.TransferSyntaxUID:
                problems.append(f"instance {iuid}: transfer syntax {theirs.file_meta.TransferSyntaxUID} for dicomweb-client, "
                                f"{mine.file_meta.TransferSyntaxUID} for Spectrum")
            for element in theirs:
                if element.tag not in mine:
                    problems.append(f"instance {iuid}: {element.tag} ({element.keyword}) missing in Spectrum's copy")
                elif mine[element.tag].value != element.value:
                    problems.append(f"instance {iuid}: {element.tag} ({element.keyword}) differs")
            for element in mine:
                if element.tag not in theirs:
                    problems.append(f"instance {iuid}: {element.tag} ({element.keyword}) only in Spectrum's copy")

    for line in problems:
        print(line)
    if problems:
        return 1
    print(f"agreed: {len(studies)} studies, {len(ours['series'])} series, {len(ours['instances'])} instances listed, "
          f"{instances_checked} data sets retrieved")
    return 0


if __name__ == "__main__":
    sys.exit(main())
