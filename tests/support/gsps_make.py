#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Writes a Grayscale Softcopy Presentation State with pydicom alone — another writer than ours — that gives each
of two images its own window and displayed area, has a rectangular and a circular display shutter, and carries an
activated overlay plane (8 × 8 at row 3, column 5, with its rows 2–3, columns 3–7 set, in its layer's grey) and one
not activated. Rows and columns differ everywhere, so that reading one for the other shows.

usage: gsps_make.py OUT STUDY_UID SERIES_UID SOP_A SOP_B
"""
import sys

from pydicom.dataset import Dataset, FileMetaDataset
from pydicom.sequence import Sequence
from pydicom.uid import ExplicitVRLittleEndian, generate_uid

GSPS = "1.2.840.10008.5.1.4.1.1.11.1"
CT = "1.2.840.10008.5.1.4.1.1.2"


def refs(*sops):
    items = []
    for sop in sops:
        r = Dataset()
        r.ReferencedSOPClassUID = CT
        r.ReferencedSOPInstanceUID = sop
        items.append(r)
    return Sequence(items)


def overlay(ds, group, origin, bits, layer=None):
    """An 8 × 8 overlay plane in `group` at `origin` (row, column); activated in `layer` when one is given."""
    tag = group << 16
    ds.add_new(tag | 0x0010, "US", 8)
    ds.add_new(tag | 0x0011, "US", 8)
    ds.add_new(tag | 0x0040, "CS", "G")
    ds.add_new(tag | 0x0050, "SS", origin)
    ds.add_new(tag | 0x0100, "US", 1)
    ds.add_new(tag | 0x0102, "US", 0)
    if layer:
        ds.add_new(tag | 0x1001, "CS", layer)
    ds.add_new(tag | 0x3000, "OW", bits)


def main():
    out, study, series, a, b = sys.argv[1:6]
    ds = Dataset()
    ds.SOPClassUID = GSPS
    ds.SOPInstanceUID = generate_uid()
    ds.StudyInstanceUID = study
    ds.SeriesInstanceUID = generate_uid()
    ds.Modality = "PR"
    ds.PatientName = "Other^Writer"
    ds.PatientID = "PR-2"
    ds.ContentLabel = "PYDICOM_GSPS"
    ds.ContentDescription = "per-image windows"
    ds.PresentationCreationDate = "20261125"
    ds.PresentationCreationTime = "101010"
    ds.InstanceNumber = 1
    series_item = Dataset()
    series_item.SeriesInstanceUID = series
    series_item.ReferencedImageSequence = refs(a, b)
    ds.ReferencedSeriesSequence = Sequence([series_item])
    voi_a, voi_b = Dataset(), Dataset()
    voi_a.ReferencedImageSequence, voi_a.WindowCenter, voi_a.WindowWidth = refs(a), 40, 80
    voi_b.ReferencedImageSequence, voi_b.WindowCenter, voi_b.WindowWidth = refs(b), 300, 1500
    ds.SoftcopyVOILUTSequence = Sequence([voi_a, voi_b])
    area_a, area_b = Dataset(), Dataset()
    area_a.ReferencedImageSequence, area_a.DisplayedAreaTopLeftHandCorner, area_a.DisplayedAreaBottomRightHandCorner = refs(a), [1, 1], [20, 10]
    area_b.ReferencedImageSequence, area_b.DisplayedAreaTopLeftHandCorner, area_b.DisplayedAreaBottomRightHandCorner = refs(b), [1, 1], [40, 40]
    for area in (area_a, area_b):
        area.PresentationSizeMode = "SCALE TO FIT"
        area.PresentationPixelSpacing = [0.5, 0.5]
    ds.DisplayedAreaSelectionSequence = Sequence([area_a, area_b])
    ds.ShutterShape = "RECTANGULAR\\CIRCULAR"
    ds.ShutterLeftVerticalEdge, ds.ShutterRightVerticalEdge = 3, 30
    ds.ShutterUpperHorizontalEdge, ds.ShutterLowerHorizontalEdge = 2, 35
    ds.CenterOfCircularShutter = [20, 12]  # row, column
    ds.RadiusOfCircularShutter = 15
    ds.ShutterPresentationValue = 0xFFFF  # white
    layer = Dataset()
    layer.GraphicLayer = "OVERLAYS"
    layer.GraphicLayerOrder = 1
    layer.GraphicLayerRecommendedDisplayGrayscaleValue = 0x8000
    ds.GraphicLayerSequence = Sequence([layer])
    # Overlay 6000: 8 × 8 at row 3, column 5, its rows 2–3 and columns 3–7 set (0-based 1–2, 2–6); activated.
    bits = bytearray(8)  # 64 bits, LSB first
    for y in range(1, 3):
        for x in range(2, 7):
            i = y * 8 + x
            bits[i // 8] |= 1 << (i % 8)
    overlay(ds, 0x6000, [3, 5], bytes(bits), layer="OVERLAYS")
    # Overlay 6002: carried, not activated — not shown.
    overlay(ds, 0x6002, [1, 1], bytes([0xFF] * 8))
    ds.PresentationLUTShape = "IDENTITY"
    ds.file_meta = FileMetaDataset()
    ds.file_meta.MediaStorageSOPClassUID = GSPS
    ds.file_meta.MediaStorageSOPInstanceUID = ds.SOPInstanceUID
    ds.file_meta.TransferSyntaxUID = ExplicitVRLittleEndian
    ds.save_as(out, write_like_original=False)


if __name__ == "__main__":
    main()
