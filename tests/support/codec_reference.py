# SPDX-License-Identifier: Apache-2.0
"""Reference pixels for the codec coverage test (tst_codeccoverage): every DICOM file with pixel data among
pydicom's own test files and pydicom-data's (PyPI), decoded by pydicom with pylibjpeg's decoders (libjpeg,
OpenJPEG, its own RLE) — software that is not ours. For each file it writes the decoded values (every frame, every
sample, as little-endian int32) to OUT/N.raw and prints one JSON line: the file, its transfer syntax and pixel
description, the shape, and the raw file — or why pydicom could not decode it.

usage: codec_reference.py OUT"""
import json
import sys
from pathlib import Path

import numpy as np
import pydicom
from pydicom.data import get_testdata_files
from pydicom.pixels import apply_color_lut


def main():
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    seen = set()
    for n, path in enumerate(sorted(get_testdata_files("*"))):
        path = Path(path)
        if path.suffix.lower() not in (".dcm", "") or path.name in seen:
            continue
        seen.add(path.name)
        try:
            ds = pydicom.dcmread(path)
        except Exception:
            continue  # not DICOM (a DICOMDIR's folder, a text file)
        if "PixelData" not in ds or "FloatPixelData" in ds or "DoubleFloatPixelData" in ds:
            continue
        try:
            entry = describe(ds, path)
        except (ValueError, TypeError) as problem:
            print(json.dumps({"file": str(path), "referenceError": f"a header pydicom cannot read: {problem}"[:300]}), flush=True)
            continue
        try:
            array = ds.pixel_array  # pydicom 3: YBR colour comes as RGB, as a viewer shows it
            if entry["photometric"] == "PALETTE COLOR":
                # Through the palette, as a viewer shows it; 16-bit entries at their top 8 bits, as we show colour.
                array = through_palette(ds, array)
                if array.dtype.itemsize > 1:
                    array = (array >> 8).astype("u1")
                entry["palette"] = True
            raw = out / f"{n}.raw"
            dtype = array.dtype.newbyteorder("<")
            array.astype(dtype).tofile(raw)
            entry["reference"] = str(raw)
            entry["dtype"] = dtype.str
            entry["shape"] = list(array.shape)
        except Exception as problem:  # noqa: BLE001 - what pydicom says is the answer
            entry["referenceError"] = f"{type(problem).__name__}: {problem}"[:300]
        print(json.dumps(entry), flush=True)


def through_palette(ds, indices):
    """pydicom's apply_color_lut, except for big endian files with 16-bit tables: pydicom 3.0.2 reads their words
    unswapped (the same image in little and big endian comes out in other colours), so those are looked up here."""
    big = str(ds.file_meta.TransferSyntaxUID) == "1.2.840.10008.1.2.2"
    descriptor = ds.RedPaletteColorLookupTableDescriptor
    if not big or int(descriptor[2]) != 16 or "SegmentedRedPaletteColorLookupTableData" in ds:
        return apply_color_lut(indices, ds)
    entries = int(descriptor[0]) or 65536
    first = int(descriptor[1])
    index = np.clip(indices.astype(np.int64) - first, 0, entries - 1)
    channels = []
    for colour in ("Red", "Green", "Blue"):
        table = np.frombuffer(ds[f"{colour}PaletteColorLookupTableData"].value, dtype=">u2")[:entries]
        channels.append(table[index])
    return np.stack(channels, axis=-1)


def describe(ds, path):
    return {
        "file": str(path),
        "transferSyntax": str(getattr(ds.file_meta, "TransferSyntaxUID", "")) if hasattr(ds, "file_meta") else "",
        "rows": int(ds.get("Rows", 0)),
        "columns": int(ds.get("Columns", 0)),
        "frames": int(ds.get("NumberOfFrames", 1) or 1),
        "samples": int(ds.get("SamplesPerPixel", 1)),
        "bitsAllocated": int(ds.get("BitsAllocated", 0)),
        "bitsStored": int(ds.get("BitsStored", 0)),
        "signed": int(ds.get("PixelRepresentation", 0)),
        "photometric": str(ds.get("PhotometricInterpretation", "")),
    }


if __name__ == "__main__":
    main()
