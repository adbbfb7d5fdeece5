#!/usr/bin/python3
"""Writes small CT images whose names are in other alphabets, encoded by pydicom (not by us), into a folder:
one file per character set, named after it. Prints one line per file: its name, then the patient name and the
study description as Unicode, tab-separated (what Spectrum must show). Used by tst_charsets and the workstation
tests."""
import sys
from pathlib import Path

import numpy as np
import pydicom
from pydicom.dataset import Dataset
from pydicom.uid import generate_uid

import dicomfiles

CASES = [
    # file, Specific Character Set, patient name, study description
    ("cyrillic", "ISO_IR 144", "Люкценберг^Иван", "КТ головы"),
    ("greek", "ISO_IR 126", "Διονυσιος", "Αξονική"),
    ("japanese", ["", "ISO 2022 IR 87"], "Yamada^Tarou=山田^太郎=やまだ^たろう", ""),
    ("chinese", "GB18030", "Wang^XiaoDong=王^小东", "胸部"),
    ("utf8", "ISO_IR 192", "Gößl^Zoë=ゴースル", "Schädel nativ"),
    ("latin1", "ISO_IR 100", "Müller^Jürgen", "Schädel"),
]


def write(folder: Path, name, charset, patient, description):
    ds = Dataset()
    ds.SpecificCharacterSet = charset
    ds.SOPClassUID = "1.2.840.10008.5.1.4.1.1.2"
    ds.SOPInstanceUID = generate_uid()
    ds.StudyInstanceUID = generate_uid()
    ds.SeriesInstanceUID = generate_uid()
    ds.Modality = "CT"
    ds.PatientName = patient
    ds.PatientID = "CS-" + name.upper()
    ds.StudyDescription = description
    ds.SeriesDescription = description
    ds.StudyDate = "20240102"
    ds.SeriesNumber = 1
    ds.InstanceNumber = 1
    ds.Rows = 8
    ds.Columns = 8
    ds.SamplesPerPixel = 1
    ds.PhotometricInterpretation = "MONOCHROME2"
    ds.BitsAllocated = 16
    ds.BitsStored = 12
    ds.HighBit = 11
    ds.PixelRepresentation = 0
    ds.RescaleIntercept = -1024
    ds.RescaleSlope = 1
    ds.PixelData = (np.arange(64, dtype=np.uint16) * 10 + 1000).tobytes()
    dicomfiles.save(ds, folder / (name + ".dcm"))


def main():
    folder = Path(sys.argv[1])
    folder.mkdir(parents=True, exist_ok=True)
    for name, charset, patient, description in CASES:
        write(folder, name, charset, patient, description)
        print(f"{name}\t{patient}\t{description}")


if __name__ == "__main__":
    main()
