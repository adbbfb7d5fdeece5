#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Writes images of every sample depth and encoding DICOM allows beyond 8/16-bit gray, with pydicom (not with our
code), into a folder, and beside each NAME.dcm the pixel values pydicom decodes from that file (NAME.f64: float64,
little endian, frames × rows × columns × samples) — an independent decoder's answer to check ours against:
- rtdose.dcm: RT Dose, 32-bit unsigned samples, Dose Grid Scaling 0.0001 Gy, 3 frames of 7 × 5 (values above 2^16)
- signed32.dcm: 32-bit signed samples, negative and beyond 16 bits
- float.dcm: Float Pixel Data (32-bit floats, a parametric map), fractions, negatives and a NaN
- double.dcm: Double Float Pixel Data
- seg.dcm: a Segmentation, 1-bit, 3 frames of 10 × 10 (100 bits a frame: frames start inside a byte)
- rgb16.dcm / rgb16-planar.dcm: 16-bit RGB (12 bits stored), interleaved and plane by plane
- rgb32.dcm: 32-bit RGB (20 bits stored), values beyond 16 bits
- gray16-wide.dcm: 16-bit gray whose values need all 16 bits (for a JPEG 2000 stream deeper than its header)
Prints the names."""
import sys
from pathlib import Path

import numpy as np
import pydicom
from pydicom.dataset import Dataset
from pydicom.uid import generate_uid

import dicomfiles

STUDY = generate_uid()


def base(modality, sop_class, rows, cols, frames=1):
    ds = Dataset()
    ds.SOPClassUID = sop_class
    ds.SOPInstanceUID = generate_uid()
    ds.StudyInstanceUID = STUDY
    ds.SeriesInstanceUID = generate_uid()
    ds.Modality = modality
    ds.PatientName = "DEPTH^TEST"
    ds.PatientID = "DEPTH-1"
    ds.StudyDate = "20240401"
    ds.SeriesNumber = 1
    ds.InstanceNumber = 1
    ds.Rows = rows
    ds.Columns = cols
    if frames > 1:
        ds.NumberOfFrames = frames
    ds.SamplesPerPixel = 1
    ds.PhotometricInterpretation = "MONOCHROME2"
    return ds


def save(ds, folder, name):
    path = folder / (name + ".dcm")
    dicomfiles.save(ds, path)
    # What an independent decoder reads back from the file.
    back = pydicom.dcmread(str(path))
    if "FloatPixelData" in back or "DoubleFloatPixelData" in back:
        dtype = np.float32 if "FloatPixelData" in back else np.float64
        raw = back.FloatPixelData if "FloatPixelData" in back else back.DoubleFloatPixelData
        values = np.frombuffer(raw, dtype=dtype).astype(np.float64)
    else:
        values = back.pixel_array.astype(np.float64)
    values.astype("<f8").tofile(str(folder / (name + ".f64")))
    print(name)


def rtdose(folder):
    ds = base("RTDOSE", "1.2.840.10008.5.1.4.1.1.481.2", 5, 7, 3)
    ds.BitsAllocated = 32
    ds.BitsStored = 32
    ds.HighBit = 31
    ds.PixelRepresentation = 0
    ds.DoseGridScaling = 0.0001
    ds.DoseUnits = "GY"
    ds.DoseType = "PHYSICAL"
    ds.GridFrameOffsetVector = [0, 2.5, 5]
    ds.ImagePositionPatient = [-10, -20, 30]
    ds.ImageOrientationPatient = [1, 0, 0, 0, 1, 0]
    ds.PixelSpacing = [2, 2]
    ds.FrameIncrementPointer = 0x3004000C
    v = (np.arange(3 * 5 * 7, dtype=np.uint32) * 9973 + 70000).reshape(3, 5, 7)
    ds.PixelData = v.astype("<u4").tobytes()
    save(ds, folder, "rtdose")


def signed32(folder):
    ds = base("OT", "1.2.840.10008.5.1.4.1.1.7", 4, 6)
    ds.BitsAllocated = 32
    ds.BitsStored = 32
    ds.HighBit = 31
    ds.PixelRepresentation = 1
    v = (np.arange(24, dtype=np.int64) - 12) * 1_000_003
    ds.PixelData = v.astype("<i4").tobytes()
    save(ds, folder, "signed32")


def floats(folder, double):
    ds = base("MR", "1.2.840.10008.5.1.4.1.1.30", 4, 5)  # Parametric Map
    ds.BitsAllocated = 64 if double else 32
    v = (np.arange(20, dtype=np.float64) - 7) * 0.125
    v[3] = np.nan
    if double:
        v[5] = 1e-300
        ds.DoubleFloatPixelData = v.astype("<f8").tobytes()
    else:
        ds.FloatPixelData = v.astype("<f4").tobytes()
    save(ds, folder, "double" if double else "float")


def seg(folder):
    ds = base("SEG", "1.2.840.10008.5.1.4.1.1.66.4", 10, 10, 3)
    ds.BitsAllocated = 1
    ds.BitsStored = 1
    ds.HighBit = 0
    ds.PixelRepresentation = 0
    ds.SegmentationType = "BINARY"
    masks = np.zeros((3, 10, 10), dtype=np.uint8)
    masks[0, 2:5, 3:8] = 1
    masks[1, 0, :] = 1
    masks[1, :, 9] = 1
    masks[2] = (np.arange(100).reshape(10, 10) % 3 == 0)
    ds.PixelData = np.packbits(masks.reshape(-1), bitorder="little").tobytes()
    save(ds, folder, "seg")


def rgb16(folder, planar):
    ds = base("XC", "1.2.840.10008.5.1.4.1.1.77.1.4", 6, 8)
    ds.SamplesPerPixel = 3
    ds.PhotometricInterpretation = "RGB"
    ds.PlanarConfiguration = 1 if planar else 0
    ds.BitsAllocated = 16
    ds.BitsStored = 12
    ds.HighBit = 11
    ds.PixelRepresentation = 0
    v = np.zeros((6, 8, 3), dtype=np.uint16)
    v[..., 0] = np.arange(48).reshape(6, 8) * 85
    v[..., 1] = 4095 - np.arange(48).reshape(6, 8) * 60
    v[..., 2] = 2048
    data = np.transpose(v, (2, 0, 1)) if planar else v
    ds.PixelData = np.ascontiguousarray(data).astype("<u2").tobytes()
    save(ds, folder, "rgb16-planar" if planar else "rgb16")


def rgb32(folder):
    ds = base("XC", "1.2.840.10008.5.1.4.1.1.77.1.4", 6, 8)
    ds.SamplesPerPixel = 3
    ds.PhotometricInterpretation = "RGB"
    ds.PlanarConfiguration = 0
    ds.BitsAllocated = 32
    ds.BitsStored = 20
    ds.HighBit = 19
    ds.PixelRepresentation = 0
    v = np.zeros((6, 8, 3), dtype=np.uint32)
    v[..., 0] = np.arange(48).reshape(6, 8) * 21800
    v[..., 1] = (1 << 20) - 1 - np.arange(48).reshape(6, 8) * 15000
    v[..., 2] = 1 << 19
    ds.PixelData = v.astype("<u4").tobytes()
    save(ds, folder, "rgb32")


def gray16_wide(folder):
    ds = base("CT", "1.2.840.10008.5.1.4.1.1.2", 64, 64)
    ds.BitsAllocated = 16
    ds.BitsStored = 16
    ds.HighBit = 15
    ds.PixelRepresentation = 0
    v = (np.arange(64 * 64, dtype=np.uint32) * 251 + 1000) % 65536
    ds.PixelData = v.astype("<u2").tobytes()
    save(ds, folder, "gray16-wide")


def main():
    folder = Path(sys.argv[1])
    folder.mkdir(parents=True, exist_ok=True)
    rtdose(folder)
    signed32(folder)
    floats(folder, False)
    floats(folder, True)
    seg(folder)
    rgb16(folder, False)
    rgb16(folder, True)
    rgb32(folder)
    gray16_wide(folder)


if __name__ == "__main__":
    main()
