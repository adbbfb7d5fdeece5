# SPDX-License-Identifier: Apache-2.0
"""What the test file generators share (charset_files.py, multiframe_files.py, depth_files.py,
segmentation_files.py): writing a pydicom dataset as a Part 10 file in explicit VR little endian."""
from pydicom.dataset import FileMetaDataset
from pydicom.uid import ExplicitVRLittleEndian, ImplicitVRLittleEndian


def save(ds, path, implicit=False):
    """`ds` as a Part 10 file at `path`, its meta information made from its SOP Class and Instance UIDs; in implicit
    VR little endian when asked (as many DIMSE peers store what they receive)."""
    meta = FileMetaDataset()
    meta.MediaStorageSOPClassUID = ds.SOPClassUID
    meta.MediaStorageSOPInstanceUID = ds.SOPInstanceUID
    meta.TransferSyntaxUID = ImplicitVRLittleEndian if implicit else ExplicitVRLittleEndian
    ds.file_meta = meta
    ds.is_little_endian = True
    ds.is_implicit_VR = implicit
    ds.save_as(str(path), write_like_original=False)
