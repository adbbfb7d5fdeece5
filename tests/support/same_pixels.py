#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Whether two DICOM files hold the same pixel values as pydicom reads them (not our code): the same shape, the same
sample type (bits and kind: unsigned, signed or floating point) and every value equal (NaN equal to NaN). Prints
"same" or what differs; exit 0 when the same."""
import sys

import numpy as np
import pydicom


def pixels(path):
    ds = pydicom.dcmread(path)
    return ds, ds.pixel_array


def main(a, b):
    da, pa = pixels(a)
    db, pb = pixels(b)
    if pa.shape != pb.shape:
        print(f"shape {pa.shape} != {pb.shape}")
        return 1
    if pa.dtype != pb.dtype:
        print(f"sample type {pa.dtype} != {pb.dtype}")
        return 1
    same = np.array_equal(pa, pb, equal_nan=True) if pa.dtype.kind == "f" else np.array_equal(pa, pb)
    if not same:
        where = np.argwhere(~((pa == pb) | (np.isnan(pa) & np.isnan(pb)) if pa.dtype.kind == "f" else (pa == pb)))
        first = tuple(where[0])
        print(f"values differ at {first}: {pa[first]} != {pb[first]} ({len(where)} of {pa.size})")
        return 1
    for keyword in ("RescaleSlope", "RescaleIntercept", "DoseGridScaling"):
        if keyword in da and str(da.get(keyword)) != str(db.get(keyword)):
            print(f"{keyword} {da.get(keyword)} != {db.get(keyword)}")
            return 1
    print("same")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
