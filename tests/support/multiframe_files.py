#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Writes multi-frame images with pydicom (not with our own code) into a folder, for the tests of frame stepping,
cine and enhanced objects:
- mr10.dcm: a 10-frame MR (Multi-frame MR is legacy-style: one geometry), Frame Time 40 ms; frame f holds the
  stored value 100·(f + 1) everywhere, so each frame is told apart by its value.
- enhanced-ct.dcm: an Enhanced CT of 5 frames whose rescale to HU (intercept −1024), pixel spacing (0.5 mm),
  orientation and window live only in the shared functional groups, and each frame's position (z = 10·f mm) in the
  per-frame groups; frame f holds stored value 1024 + 10·f (so f·10 HU).
- us-loop.dcm: an 8-frame RGB ultrasound loop with a Frame Time Vector (0, 20, 20, … ms: 50 frames a second).
Prints the files' names."""
import sys
from pathlib import Path

import numpy as np
from pydicom.dataset import Dataset
from pydicom.sequence import Sequence
from pydicom.uid import generate_uid

import dicomfiles

STUDY = generate_uid()


def base(modality, sop_class, rows, cols, frames):
    ds = Dataset()
    ds.SOPClassUID = sop_class
    ds.SOPInstanceUID = generate_uid()
    ds.StudyInstanceUID = STUDY
    ds.SeriesInstanceUID = generate_uid()
    ds.FrameOfReferenceUID = generate_uid()
    ds.Modality = modality
    ds.PatientName = "MULTI^FRAME"
    ds.PatientID = "MF-1"
    ds.StudyDate = "20240301"
    ds.StudyDescription = "Multi-frame"
    ds.SeriesDescription = modality + " multi-frame"
    ds.SeriesNumber = {"MR": 1, "CT": 2, "US": 3}[modality]
    ds.InstanceNumber = 1
    ds.Rows = rows
    ds.Columns = cols
    ds.NumberOfFrames = frames
    return ds


def save(ds, path):
    dicomfiles.save(ds, path)


def mono(ds, pixels):
    ds.SamplesPerPixel = 1
    ds.PhotometricInterpretation = "MONOCHROME2"
    ds.BitsAllocated = 16
    ds.BitsStored = 16
    ds.HighBit = 15
    ds.PixelRepresentation = 0
    ds.PixelData = pixels.astype(np.uint16).tobytes()


def mr10(folder):
    ds = base("MR", "1.2.840.10008.5.1.4.1.1.4", 32, 32, 10)
    ds.FrameTime = 40
    ds.FrameIncrementPointer = 0x00181063
    ds.PixelSpacing = [1, 1]
    ds.ImagePositionPatient = [0, 0, 0]
    ds.ImageOrientationPatient = [1, 0, 0, 0, 1, 0]
    mono(ds, np.stack([np.full((32, 32), 100 * (f + 1)) for f in range(10)]))
    save(ds, folder / "mr10.dcm")


def enhanced_ct(folder):
    ds = base("CT", "1.2.840.10008.5.1.4.1.1.2.1", 32, 32, 5)
    ds.ImageType = ["ORIGINAL", "PRIMARY", "AXIAL", "NONE"]
    mono(ds, np.stack([np.full((32, 32), 1024 + 10 * f) for f in range(5)]))
    shared = Dataset()
    measures = Dataset()
    measures.PixelSpacing = [0.5, 0.5]
    measures.SliceThickness = 10
    shared.PixelMeasuresSequence = Sequence([measures])
    orientation = Dataset()
    orientation.ImageOrientationPatient = [1, 0, 0, 0, 1, 0]
    shared.PlaneOrientationSequence = Sequence([orientation])
    transform = Dataset()
    transform.RescaleIntercept = -1024
    transform.RescaleSlope = 1
    transform.RescaleType = "HU"
    shared.PixelValueTransformationSequence = Sequence([transform])
    voi = Dataset()
    voi.WindowCenter = 40
    voi.WindowWidth = 400
    shared.FrameVOILUTSequence = Sequence([voi])
    ds.SharedFunctionalGroupsSequence = Sequence([shared])
    frames = []
    for f in range(5):
        item = Dataset()
        position = Dataset()
        position.ImagePositionPatient = [-8, -8, 10.0 * f]
        item.PlanePositionSequence = Sequence([position])
        content = Dataset()
        content.InStackPositionNumber = f + 1
        item.FrameContentSequence = Sequence([content])
        frames.append(item)
    ds.PerFrameFunctionalGroupsSequence = Sequence(frames)
    save(ds, folder / "enhanced-ct.dcm")


def us_loop(folder):
    ds = base("US", "1.2.840.10008.5.1.4.1.1.3.1", 24, 32, 8)
    ds.FrameTimeVector = [0] + [20] * 7
    ds.FrameIncrementPointer = 0x00181065
    ds.SamplesPerPixel = 3
    ds.PhotometricInterpretation = "RGB"
    ds.PlanarConfiguration = 0
    ds.BitsAllocated = 8
    ds.BitsStored = 8
    ds.HighBit = 7
    ds.PixelRepresentation = 0
    frames = np.zeros((8, 24, 32, 3), dtype=np.uint8)
    for f in range(8):
        frames[f, :, :, 0] = 30 * f
        frames[f, :, :, 1] = 100
    ds.PixelData = frames.tobytes()
    save(ds, folder / "us-loop.dcm")


def main():
    folder = Path(sys.argv[1])
    folder.mkdir(parents=True, exist_ok=True)
    mr10(folder)
    enhanced_ct(folder)
    us_loop(folder)
    for name in ("mr10.dcm", "enhanced-ct.dcm", "us-loop.dcm"):
        print(name)


if __name__ == "__main__":
    main()
