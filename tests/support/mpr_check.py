#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Reformatting checked by software that is not ours (pydicom, numpy, VTK), for tst_reformat.

  mpr_check.py series DIR [--gap K] [--shuffle]
      Writes a CT series with pydicom: 40 axial slices of 64 columns × 48 rows, 0.7 mm between columns, 0.6 mm
      between rows, 1.25 mm between slices, stored values 0…3000 (seeded noise: no two neighbours alike) rescaled to
      HU (intercept −1024). --gap K leaves slice K out. Files are named in shuffled order (not the slices' order).

  mpr_check.py check DIR OUT.dcm [--slab MM --mode mip|minip|average]
      OUT.dcm is a plane Spectrum cut from DIR. numpy builds the volume from DIR's slices by their positions and
      finds, for every pixel of OUT, the patient point its Image Position/Orientation and Pixel Spacing give: the
      point must lie on a voxel centre (within 0.1 mm) and the pixel's modality value must equal that voxel's
      exactly — or, for a slab, the projection (max, min, or the mean rounded half away from zero) of the voxels
      along the plane's normal within half the slab of it. Pixels equal to Pixel Padding Value must be those
      outside the volume.

  mpr_check.py vtk DIR OUT.dcm
      OUT.dcm is an oblique plane: VTK's vtkImageReslice (trilinear) cuts the same plane from the same slices; every
      pixel at least one voxel inside the volume must be within one grey level of VTK's.

Prints one line saying what was compared; exits 1 (and says where) on the first difference."""
import argparse
import random
import sys
import warnings
from pathlib import Path

import numpy as np
import pydicom
from pydicom.dataset import Dataset
from pydicom.uid import generate_uid

sys.path.insert(0, str(Path(__file__).parent))
import dicomfiles  # noqa: E402

COLS, ROWS, SLICES = 64, 48, 40
COL_SPACING, ROW_SPACING, SLICE_SPACING = 0.7, 0.6, 1.25
ORIGIN = np.array([-20.0, -15.0, 30.0])


def write_series(folder, gap, shuffle):
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(7)
    volume = rng.integers(0, 3001, size=(SLICES, ROWS, COLS)).astype(np.uint16)
    study, series, frame = generate_uid(), generate_uid(), generate_uid()
    order = list(range(SLICES))
    if shuffle:
        random.Random(3).shuffle(order)
    for name, k in enumerate(order):
        if k == gap:
            continue
        ds = Dataset()
        ds.SOPClassUID = "1.2.840.10008.5.1.4.1.1.2"
        ds.SOPInstanceUID = generate_uid()
        ds.StudyInstanceUID = study
        ds.SeriesInstanceUID = series
        ds.FrameOfReferenceUID = frame
        ds.Modality = "CT"
        ds.PatientName = "VOLUME^TEST"
        ds.PatientID = "MPR-1"
        ds.StudyDate = "20260301"
        ds.SeriesDescription = "MPR test"
        ds.SeriesNumber = 3
        ds.InstanceNumber = k + 1
        ds.ImageType = ["ORIGINAL", "PRIMARY", "AXIAL"]
        ds.ImagePositionPatient = [float(v) for v in ORIGIN + [0, 0, k * SLICE_SPACING]]
        ds.ImageOrientationPatient = [1, 0, 0, 0, 1, 0]
        ds.PixelSpacing = [ROW_SPACING, COL_SPACING]
        ds.SliceThickness = 2.5  # not the spacing
        ds.RescaleIntercept = -1024
        ds.RescaleSlope = 1
        ds.RescaleType = "HU"
        ds.WindowCenter = 40
        ds.WindowWidth = 400
        ds.Rows, ds.Columns = ROWS, COLS
        ds.SamplesPerPixel = 1
        ds.PhotometricInterpretation = "MONOCHROME2"
        ds.BitsAllocated, ds.BitsStored, ds.HighBit, ds.PixelRepresentation = 16, 12, 11, 0
        ds.PixelData = volume[k].tobytes()
        dicomfiles.save(ds, folder / f"file{name:03d}.dcm")
    print(f"{SLICES - (1 if gap is not None else 0)} slices in {folder}")


def read_volume(folder):
    """The slices by position along the normal: values in HU, [slot, row, column]; origin, axes and spacings."""
    slices = [pydicom.dcmread(p) for p in sorted(Path(folder).glob("*.dcm"))]
    iop = np.array(slices[0].ImageOrientationPatient, dtype=float)
    u, v = iop[:3], iop[3:]
    n = np.cross(u, v)
    slices.sort(key=lambda s: float(np.dot(n, np.array(s.ImagePositionPatient, dtype=float))))
    pos = [np.array(s.ImagePositionPatient, dtype=float) for s in slices]
    steps = np.diff([np.dot(n, p) for p in pos])
    spacing = float(np.sort(steps)[(len(steps) - 1) // 2])
    slots = int(round(np.dot(n, pos[-1] - pos[0]) / spacing)) + 1
    vol = np.full((slots, slices[0].Rows, slices[0].Columns), np.nan)
    for s, p in zip(slices, pos):
        k = int(round(np.dot(n, p - pos[0]) / spacing))
        vol[k] = s.pixel_array.astype(float) * float(s.RescaleSlope) + float(s.RescaleIntercept)
    col_spacing, row_spacing = float(slices[0].PixelSpacing[1]), float(slices[0].PixelSpacing[0])
    return vol, pos[0], (u, v, n), (col_spacing, row_spacing, spacing)


def plane_points(out):
    """The patient point of every pixel of `out`: [rows, columns, 3]."""
    ipp = np.array(out.ImagePositionPatient, dtype=float)
    iop = np.array(out.ImageOrientationPatient, dtype=float)
    rs, cs = float(out.PixelSpacing[0]), float(out.PixelSpacing[1])
    r, c = np.mgrid[0:out.Rows, 0:out.Columns]
    return ipp + c[..., None] * cs * iop[:3] + r[..., None] * rs * iop[3:], np.cross(iop[:3], iop[3:])


def to_index(points, origin, axes, spacing):
    d = points - origin
    return np.stack([d @ axes[0] / spacing[0], d @ axes[1] / spacing[1], d @ axes[2] / spacing[2]], axis=-1)


def modality(out):
    px = out.pixel_array.astype(float)
    padding = getattr(out, "PixelPaddingValue", None)
    absent = px == padding if padding is not None else np.zeros(px.shape, bool)
    return px * float(getattr(out, "RescaleSlope", 1)) + float(getattr(out, "RescaleIntercept", 0)), absent


def fail(message):
    print("mpr_check: " + message)
    sys.exit(1)


def check(folder, path, slab, mode):
    vol, origin, axes, spacing = read_volume(folder)
    out = pydicom.dcmread(path)
    values, absent = modality(out)
    points, normal = plane_points(out)
    mm = np.array(spacing)
    samples = [0.0]
    if slab > 0:
        # Along the plane's normal: the volume axis it runs along, one voxel step at a time.
        step_index = np.abs(np.array([normal @ axes[0] / spacing[0], normal @ axes[1] / spacing[1], normal @ axes[2] / spacing[2]]))
        step_mm = 1 / step_index.max()
        half = int(np.floor(slab / 2 / step_mm + 1e-6))
        samples = [k * step_mm for k in range(-half, half + 1)]
    gathered = []
    for offset in samples:
        idx = to_index(points + offset * normal, origin, axes, spacing)
        near = np.rint(idx)
        off_mm = np.abs(idx - near) * mm
        inside = np.all((near >= 0) & (near <= np.array(vol.shape[::-1]) - 1), axis=-1)
        if np.any(off_mm[inside].max(axis=-1) > 0.1):
            fail(f"{path}: a pixel's point lies {off_mm[inside].max():.3f} mm off the nearest voxel centre")
        k = np.clip(near.astype(int), 0, np.array(vol.shape[::-1]) - 1)
        sample = vol[k[..., 2], k[..., 1], k[..., 0]]
        sample[~inside] = np.nan
        gathered.append(sample)
    stack = np.stack(gathered)
    missing_needed = np.zeros(values.shape, bool)
    inside_any = np.any(~np.isnan(stack), axis=0)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN: pixels outside, checked below
        if mode == "mip":
            expected = np.nanmax(stack, axis=0)
        elif mode == "minip":
            expected = np.nanmin(stack, axis=0)
        else:
            total = np.nansum(stack, axis=0)
            count = np.sum(~np.isnan(stack), axis=0)
            q = np.abs(total) / np.maximum(count, 1)
            expected = np.sign(total) * np.floor(q + 0.5)
    # A pixel whose samples need a missing slot is absent; so is one with no sample inside.
    vol_missing = np.isnan(vol).all(axis=(1, 2))
    for offset in samples:
        idx = np.rint(to_index(points + offset * normal, origin, axes, spacing)).astype(int)
        inside = np.all((idx >= 0) & (idx <= np.array(vol.shape[::-1]) - 1), axis=-1)
        z = np.clip(idx[..., 2], 0, vol.shape[0] - 1)
        missing_needed |= inside & vol_missing[z]
    should_be_absent = missing_needed | ~inside_any
    if np.any(absent != should_be_absent):
        r, c = np.argwhere(absent != should_be_absent)[0]
        fail(f"{path}: pixel ({c}, {r}) is {'absent' if absent[r, c] else 'present'}; numpy says it should be "
             f"{'absent' if should_be_absent[r, c] else 'present'}")
    shown = ~absent
    diff = np.abs(values - expected)[shown]
    if diff.size and diff.max() > 0:
        r, c = np.argwhere(shown & (np.abs(values - expected) > 0))[0]
        fail(f"{path}: pixel ({c}, {r}) is {values[r, c]:.0f} HU; numpy gives {expected[r, c]:.0f}")
    print(f"{path}: {out.Columns}×{out.Rows}, {int(shown.sum())} pixels equal to numpy's"
          f"{f' {mode} over {len(samples)} samples' if slab > 0 else ''}, {int(absent.sum())} absent as numpy says, "
          f"every point on a voxel centre (≤ 0.1 mm)")


def check_vtk(folder, path):
    import vtk
    from vtk.util import numpy_support

    vol, origin, axes, spacing = read_volume(folder)
    if np.isnan(vol).any():
        fail("the VTK check takes a volume without gaps")
    out = pydicom.dcmread(path)
    values, absent = modality(out)
    image = vtk.vtkImageData()
    image.SetDimensions(vol.shape[2], vol.shape[1], vol.shape[0])
    image.SetSpacing(*spacing)
    image.SetOrigin(0, 0, 0)
    image.GetPointData().SetScalars(numpy_support.numpy_to_vtk(vol.astype(np.float64).ravel(), deep=1))
    # The plane in the volume's own frame (its axes, its first voxel at 0).
    ipp = np.array(out.ImagePositionPatient, dtype=float)
    iop = np.array(out.ImageOrientationPatient, dtype=float)
    basis = np.stack(axes)  # rows: u, v, n
    o = basis @ (ipp - origin)
    ru, cu = basis @ iop[:3], basis @ iop[3:]
    nu = np.cross(ru, cu)
    m = vtk.vtkMatrix4x4()
    for i in range(3):
        m.SetElement(i, 0, ru[i])
        m.SetElement(i, 1, cu[i])
        m.SetElement(i, 2, nu[i])
        m.SetElement(i, 3, o[i])
    reslice = vtk.vtkImageReslice()
    reslice.SetInputData(image)
    reslice.SetResliceAxes(m)
    reslice.SetInterpolationModeToLinear()
    reslice.SetOutputDimensionality(2)
    reslice.SetOutputSpacing(float(out.PixelSpacing[1]), float(out.PixelSpacing[0]), 1)
    reslice.SetOutputOrigin(0, 0, 0)
    reslice.SetOutputExtent(0, out.Columns - 1, 0, out.Rows - 1, 0, 0)
    reslice.SetBackgroundLevel(np.nan)
    reslice.Update()
    theirs = numpy_support.vtk_to_numpy(reslice.GetOutput().GetPointData().GetScalars()).reshape(out.Rows, out.Columns)
    points, _ = plane_points(out)
    idx = to_index(points, origin, axes, spacing)
    interior = np.all((idx >= 1) & (idx <= np.array(vol.shape[::-1]) - 2), axis=-1)
    if interior.sum() < 100:
        fail(f"{path}: fewer than 100 pixels lie inside the volume")
    if np.any(absent & interior):
        fail(f"{path}: {int((absent & interior).sum())} pixels inside the volume are absent")
    diff = np.abs(values - theirs)[interior]
    if diff.max() > 1:
        r, c = np.argwhere(interior & (np.abs(values - theirs) > 1))[0]
        fail(f"{path}: pixel ({c}, {r}) is {values[r, c]:.0f} HU; VTK's vtkImageReslice gives {theirs[r, c]:.2f}")
    print(f"{path}: {int(interior.sum())} interior pixels within {diff.max():.2f} grey level of VTK's vtkImageReslice "
          f"(mean difference {diff.mean():.3f})")


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("series")
    s.add_argument("folder")
    s.add_argument("--gap", type=int)
    s.add_argument("--shuffle", action="store_true")
    c = sub.add_parser("check")
    c.add_argument("folder")
    c.add_argument("out")
    c.add_argument("--slab", type=float, default=0)
    c.add_argument("--mode", default="mip", choices=["mip", "minip", "average"])
    v = sub.add_parser("vtk")
    v.add_argument("folder")
    v.add_argument("out")
    a = parser.parse_args()
    if a.command == "series":
        write_series(a.folder, a.gap, a.shuffle)
    elif a.command == "check":
        check(a.folder, a.out, a.slab, a.mode)
    else:
        check_vtk(a.folder, a.out)


if __name__ == "__main__":
    main()
