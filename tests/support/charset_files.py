#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Writes small CT images whose names are in other alphabets, encoded by pydicom (not by us), into a folder:
one file per character set, named after it. Prints one line per file: its name, then the patient name and the
study description as Unicode, tab-separated (what Spectrum must show). Used by tst_charsets and the workstation
tests. With --extras, files whose other values test re-encoding instead (tst_derivedinstance): several values in
one element, a text with leading spaces, a private element of no known type (UN) holding Cyrillic bytes."""
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


def write(folder: Path, name, charset, patient, description, extra=None, implicit=False):
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
    if extra:
        extra(ds)
    dicomfiles.save(ds, folder / (name + ".dcm"), implicit)


def values(ds):
    ds.ImageComments = "  первая\tстрока\r\nвторая"  # LT: its leading spaces and line breaks are part of it
    ds.OtherPatientNames = ["Иванов", "Петров"]


def unknown(ds):
    values(ds)
    ds.add_new(0x00090010, "LO", "SPECTRUM TEST")
    ds.add_new(0x00091010, "UN", "Тест".encode("iso8859_5"))


def japanese(ds):
    ds.OtherPatientNames = ["ﾔﾏﾀﾞ", "山田"]
    ds.ImageComments = "ﾔﾏﾀﾞ ¥100"  # LT: in JIS X 0201 the byte 05/12 is a yen sign, and no delimiter in free text


def extras(folder: Path):
    write(folder, "cyrillic-values", "ISO_IR 144", "Люкценберг^Иван", "КТ головы", values)
    write(folder, "cyrillic-unknown", "ISO_IR 144", "Люкценберг^Иван", "КТ головы", unknown)
    # Implicit VR: the private element's type is not written, DCMTK reads it as unknown.
    write(folder, "cyrillic-unknown-implicit", "ISO_IR 144", "Люкценберг^Иван", "КТ головы", unknown, implicit=True)
    write(folder, "japanese-values", ["ISO 2022 IR 13", "ISO 2022 IR 87"], "ﾔﾏﾀﾞ^ﾀﾛｳ=山田^太郎", "", japanese)


def main():
    folder = Path(sys.argv[1])
    folder.mkdir(parents=True, exist_ok=True)
    if sys.argv[2:] == ["--extras"]:
        extras(folder)
        return
    for name, charset, patient, description in CASES:
        write(folder, name, charset, patient, description)
        print(f"{name}\t{patient}\t{description}")


if __name__ == "__main__":
    main()
