#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Writes, with pydicom (not with our code), a small CT series of three 16 × 16 slices and a Segmentation drawn on
it: two frames of segment 1 ("Lesion", red by its CIELab value), on slices 2 and 3 (referenced by SOP Instance
UID), each a 4 × 4 square at rows and columns 4–7. Prints the files' names."""
import sys
from pathlib import Path

import numpy as np
from pydicom.dataset import Dataset
from pydicom.sequence import Sequence
from pydicom.uid import generate_uid

import dicomfiles

STUDY, FRAME = generate_uid(), generate_uid()


def common(ds, modality, series, number):
    ds.StudyInstanceUID = STUDY
    ds.SeriesInstanceUID = series
    ds.FrameOfReferenceUID = FRAME
    ds.Modality = modality
    ds.PatientName = "SEG^TEST"
    ds.PatientID = "SEG-1"
    ds.StudyDate = "20240501"
    ds.StudyDescription = "CT with a segmentation"
    ds.SeriesNumber = number
    ds.Rows = 16
    ds.Columns = 16
    ds.SamplesPerPixel = 1
    ds.PhotometricInterpretation = "MONOCHROME2"


def save(ds, path):
    dicomfiles.save(ds, path)
    print(path.name)


def main():
    folder = Path(sys.argv[1])
    folder.mkdir(parents=True, exist_ok=True)
    series = generate_uid()
    slices = []
    for i in range(3):
        ds = Dataset()
        ds.SOPClassUID = "1.2.840.10008.5.1.4.1.1.2"
        ds.SOPInstanceUID = generate_uid()
        common(ds, "CT", series, 1)
        ds.InstanceNumber = i + 1
        ds.ImagePositionPatient = [0, 0, 5.0 * i]
        ds.ImageOrientationPatient = [1, 0, 0, 0, 1, 0]
        ds.PixelSpacing = [1, 1]
        ds.BitsAllocated = 16
        ds.BitsStored = 12
        ds.HighBit = 11
        ds.PixelRepresentation = 0
        ds.RescaleIntercept = -1024
        ds.RescaleSlope = 1
        ds.WindowCenter = 40
        ds.WindowWidth = 400
        ds.PixelData = np.full((16, 16), 1024 + 40, dtype="<u2").tobytes()
        save(ds, folder / f"ct{i + 1}.dcm")
        slices.append(ds)

    seg = Dataset()
    seg.SOPClassUID = "1.2.840.10008.5.1.4.1.1.66.4"
    seg.SOPInstanceUID = generate_uid()
    common(seg, "SEG", generate_uid(), 2)
    seg.InstanceNumber = 1
    seg.NumberOfFrames = 2
    seg.BitsAllocated = 1
    seg.BitsStored = 1
    seg.HighBit = 0
    seg.PixelRepresentation = 0
    seg.SegmentationType = "BINARY"
    segment = Dataset()
    segment.SegmentNumber = 1
    segment.SegmentLabel = "Lesion"
    segment.SegmentAlgorithmType = "MANUAL"
    segment.RecommendedDisplayCIELabValue = [34885, 53485, 50171]  # a strong red
    seg.SegmentSequence = Sequence([segment])
    frames = []
    for source in slices[1:]:
        item = Dataset()
        derivation = Dataset()
        reference = Dataset()
        reference.ReferencedSOPClassUID = source.SOPClassUID
        reference.ReferencedSOPInstanceUID = source.SOPInstanceUID
        derivation.SourceImageSequence = Sequence([reference])
        item.DerivationImageSequence = Sequence([derivation])
        identification = Dataset()
        identification.ReferencedSegmentNumber = 1
        item.SegmentIdentificationSequence = Sequence([identification])
        position = Dataset()
        position.ImagePositionPatient = source.ImagePositionPatient
        item.PlanePositionSequence = Sequence([position])
        frames.append(item)
    seg.PerFrameFunctionalGroupsSequence = Sequence(frames)
    masks = np.zeros((2, 16, 16), dtype=np.uint8)
    masks[:, 4:8, 4:8] = 1
    seg.PixelData = np.packbits(masks.reshape(-1), bitorder="little").tobytes()
    save(seg, folder / "seg.dcm")


if __name__ == "__main__":
    main()
