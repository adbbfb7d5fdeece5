#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Writes a geometry phantom with pydicom (not with our code) into a folder: one study, two series, whose every
feature lies at a known place in mm, so that a test can measure what the workstation draws.

- Series 1, "PHANTOM CT 0.5x0.5x2": 40 axial CT slices of 256 x 256 pixels, 0.5 x 0.5 mm pixels, 2 mm apart
  (anisotropic voxels, 1 : 4). Pixel (i, j) of slice k lies at (0.5 i, 0.5 j, 2 k) mm. Air (-1000 HU) holds
    - sphere A: centre (63.75, 63.75, 39) mm, radius 20 mm, 1000 HU — the volume's centre, on voxel boundaries
      along every axis, so that any standard plane through its centre holds exactly 80 columns and 20 slices of it;
    - sphere B: centre (103.75, 63.75, 59) mm, radius 6 mm, 400 HU — a marker off the centre.
  A voxel is inside a sphere when its centre is.
- Series 2, "PHANTOM DX non-square": two projection images of 512 columns x 256 rows whose pixels are twice as tall
  as wide: a disc of radius 60 mm (240 columns, 120 rows) at its centre, 3000 on 0. Image 1 says so by Pixel Spacing
  (1.0 \\ 0.5 mm); image 2 records no spacing, only Pixel Aspect Ratio 2 \\ 1 (as a scanned film or an ultrasound
  capture may).

Prints the two series' folders."""
import sys
from pathlib import Path

import numpy as np
from pydicom.dataset import Dataset
from pydicom.uid import generate_uid

import dicomfiles

STUDY = generate_uid()
FRAME = generate_uid()

SPHERE_A = ((63.75, 63.75, 39.0), 20.0, 1000)
SPHERE_B = ((103.75, 63.75, 59.0), 6.0, 400)


def base(modality, sop_class, series_uid, number, description):
    ds = Dataset()
    ds.SOPClassUID = sop_class
    ds.SOPInstanceUID = generate_uid()
    ds.StudyInstanceUID = STUDY
    ds.SeriesInstanceUID = series_uid
    ds.PatientName = "PHANTOM^GEOMETRY"
    ds.PatientID = "PHANTOM-1"
    ds.PatientBirthDate = "20000101"
    ds.PatientSex = "O"
    ds.StudyDate = "20261128"
    ds.StudyTime = "120000"
    ds.StudyDescription = "Geometry phantom"
    ds.StudyID = "1"
    ds.AccessionNumber = "PH1"
    ds.Modality = modality
    ds.SeriesNumber = number
    ds.SeriesDescription = description
    ds.SamplesPerPixel = 1
    ds.PhotometricInterpretation = "MONOCHROME2"
    ds.BitsAllocated = 16
    ds.BitsStored = 16
    ds.HighBit = 15
    return ds


def ct(folder):
    folder.mkdir(parents=True, exist_ok=True)
    series = generate_uid()
    cols = rows = 256
    x = 0.5 * np.arange(cols)[None, :]
    y = 0.5 * np.arange(rows)[:, None]
    for k in range(40):
        z = 2.0 * k
        hu = np.full((rows, cols), -1000, dtype=np.int32)
        for (cx, cy, cz), r, value in (SPHERE_A, SPHERE_B):
            inside = (x - cx) ** 2 + (y - cy) ** 2 + (z - cz) ** 2 < r * r
            hu[inside] = value
        ds = base("CT", "1.2.840.10008.5.1.4.1.1.2", series, 1, "PHANTOM CT 0.5x0.5x2")
        ds.FrameOfReferenceUID = FRAME
        ds.InstanceNumber = k + 1
        ds.ImagePositionPatient = [0, 0, z]
        ds.ImageOrientationPatient = [1, 0, 0, 0, 1, 0]
        ds.PixelSpacing = [0.5, 0.5]
        ds.SliceThickness = 2
        ds.Rows, ds.Columns = rows, cols
        ds.PixelRepresentation = 0
        ds.RescaleIntercept = -1024
        ds.RescaleSlope = 1
        ds.RescaleType = "HU"
        ds.WindowCenter = 0
        ds.WindowWidth = 2000
        ds.PixelData = (hu + 1024).astype("<u2").tobytes()
        dicomfiles.save(ds, folder / f"CT{k + 1:03d}.dcm")


def dx(folder):
    folder.mkdir(parents=True, exist_ok=True)
    cols, rows = 512, 256
    x = 0.5 * np.arange(cols)[None, :]
    y = 1.0 * np.arange(rows)[:, None]
    cx, cy = 0.5 * (cols - 1) / 2, 1.0 * (rows - 1) / 2
    image = np.where((x - cx) ** 2 + (y - cy) ** 2 < 60.0 ** 2, 3000, 0).astype("<u2")
    series = generate_uid()
    for number in (1, 2):
        ds = base("OT", "1.2.840.10008.5.1.4.1.1.7", series, 2, "PHANTOM DX non-square")
        ds.InstanceNumber = number
        if number == 1:
            ds.PixelSpacing = [1.0, 0.5]
        else:
            ds.PixelAspectRatio = [2, 1]
        ds.Rows, ds.Columns = rows, cols
        ds.PixelRepresentation = 0
        ds.WindowCenter = 1500
        ds.WindowWidth = 3000
        ds.PixelData = image.tobytes()
        dicomfiles.save(ds, folder / f"DX{number:03d}.dcm")


if __name__ == "__main__":
    out = Path(sys.argv[1])
    ct(out / "ct")
    dx(out / "dx")
    print(out / "ct")
    print(out / "dx")
