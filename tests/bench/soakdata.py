#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# The soak's archive (tests/bench/soak.sh): COPIES patients, each with the demo's studies under new UIDs (a CT and
# its prior, two chest radiographs and an MR: the studies of one patient across a reading day and the year before).
# Writes each copy's files under OUT/NNN/ and prints, in the order a reader would open them, one line per study:
# "STUDY_UID PATIENT_ID".  Usage: soakdata.py DEMO_DIR OUT COPIES   (DEMO_DIR: `spectrum-cli demo --out`)
import os
import sys

import pydicom
from pydicom.uid import generate_uid

demo, out, copies = sys.argv[1], sys.argv[2], int(sys.argv[3])
# The studies in the order the reader opens them: today's first, then the priors.
order = ["demo-ct", "demo-cr", "demo-mr", "demo-ct-prior", "demo-cr-prior"]
sources = {}
for name in order:
    folder = os.path.join(demo, name)
    sources[name] = [(f, pydicom.dcmread(os.path.join(folder, f))) for f in sorted(os.listdir(folder))]

for copy in range(copies):
    patient = "SOAK%04d" % copy
    folder = os.path.join(out, "%04d" % copy)
    os.makedirs(folder, exist_ok=True)
    for name in order:
        study = generate_uid()
        series = {}
        for f, ds in sources[name]:
            ds.PatientID = patient
            ds.PatientName = "SOAK^PATIENT%04d" % copy
            ds.PatientBirthDate = "19%02d0101" % (30 + copy % 60)
            ds.PatientSex = "F" if copy % 2 else "M"
            if "IssuerOfPatientID" in ds:
                del ds.IssuerOfPatientID
            ds.StudyInstanceUID = study
            old = ds.SeriesInstanceUID
            series.setdefault(old, generate_uid())
            ds.SeriesInstanceUID = series[old]
            ds.SOPInstanceUID = generate_uid()
            ds.file_meta.MediaStorageSOPInstanceUID = ds.SOPInstanceUID
            ds.AccessionNumber = "SOAK%04d%d" % (copy, order.index(name))
            ds.save_as(os.path.join(folder, "%s-%s" % (name, f)))
            ds.SeriesInstanceUID = old  # the source again, for the next copy's map
        print(study, patient, flush=True)
