#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Rewrites a colour image of 16-bit samples (tests/support/depth_files.py's rgb16.dcm) as JPEG 2000 lossless, with
tools that are not ours: OpenJPEG's opj_compress makes the codestream (its reversible colour transform, so the file
says YBR_RCT), pydicom encapsulates it.

Usage: j2k_colour.py IN.dcm OUT.dcm OPJ_COMPRESS"""
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pydicom
from pydicom.encaps import encapsulate
from pydicom.uid import JPEG2000Lossless


def main():
    source, target, opj = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
    ds = pydicom.dcmread(str(source))
    rgb = ds.pixel_array.astype(np.uint16)  # rows × columns × 3
    top = (1 << int(ds.BitsStored)) - 1
    with tempfile.TemporaryDirectory() as work:
        ppm = Path(work) / "in.ppm"
        j2k = Path(work) / "out.j2k"
        header = f"P6\n{ds.Columns} {ds.Rows}\n{top}\n".encode()
        ppm.write_bytes(header + rgb.astype(">u2").tobytes())
        subprocess.run([opj, "-i", str(ppm), "-o", str(j2k), "-n", "2"], check=True, capture_output=True)
        codestream = j2k.read_bytes()
    ds.PixelData = encapsulate([codestream])
    ds["PixelData"].VR = "OB"
    ds.PhotometricInterpretation = "YBR_RCT"
    ds.PlanarConfiguration = 0
    ds.file_meta.TransferSyntaxUID = JPEG2000Lossless
    ds.is_little_endian = True
    ds.is_implicit_VR = False
    ds.save_as(str(target), write_like_original=False)


if __name__ == "__main__":
    main()
