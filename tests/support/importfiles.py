#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes N small CT instances (64 x 64, 16-bit, ~8 KB each; 500 to a study) into a folder, with pydicom (Debian's,
for /usr/bin/python3): the files tests/bench/import.sh and tst_dicomimport import. Usage: importfiles.py DIR N"""
import sys, os, numpy as np
from pydicom.dataset import Dataset, FileMetaDataset
from pydicom.uid import ExplicitVRLittleEndian, generate_uid, CTImageStorage
out, n = sys.argv[1], int(sys.argv[2])
os.makedirs(out, exist_ok=True)
per_study = 500
pix = (np.arange(64*64, dtype=np.uint16).reshape(64, 64)).tobytes()
for s in range((n + per_study - 1) // per_study):
    study, series = generate_uid(), generate_uid()
    for i in range(min(per_study, n - s*per_study)):
        ds = Dataset(); ds.is_little_endian = True; ds.is_implicit_VR = False
        ds.file_meta = FileMetaDataset()
        ds.file_meta.MediaStorageSOPClassUID = CTImageStorage
        sop = generate_uid()
        ds.file_meta.MediaStorageSOPInstanceUID = sop
        ds.file_meta.TransferSyntaxUID = ExplicitVRLittleEndian
        ds.SOPClassUID = CTImageStorage; ds.SOPInstanceUID = sop
        ds.PatientName = f"Import^Patient{s}"; ds.PatientID = f"IMP{s:05d}"
        ds.StudyInstanceUID = study; ds.SeriesInstanceUID = series; ds.Modality = "CT"
        ds.StudyDate = "20261127"; ds.InstanceNumber = i + 1; ds.SeriesNumber = 1
        ds.Rows = 64; ds.Columns = 64; ds.BitsAllocated = 16; ds.BitsStored = 16; ds.HighBit = 15
        ds.PixelRepresentation = 0; ds.SamplesPerPixel = 1; ds.PhotometricInterpretation = "MONOCHROME2"
        ds.ImagePositionPatient = [0, 0, i]; ds.ImageOrientationPatient = [1, 0, 0, 0, 1, 0]; ds.PixelSpacing = [1, 1]
        ds.PixelData = pix
        ds.save_as(os.path.join(out, f"s{s:03d}-{i:04d}.dcm"), write_like_original=False)
