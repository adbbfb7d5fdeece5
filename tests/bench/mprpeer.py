#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Reformatting benchmark, VTK's side (tests/bench/mpr.sh): the same raw volume and the same planes as
spectrum-mprbench (its `plane` lines on stdin), cut by vtkImageReslice (trilinear) and vtkImageSlabReslice (MIP, one
sample per voxel step across the slab, as ours). Prints "case best_ms median_ms" per case."""
import sys
import time

import numpy as np
import vtk
from vtk.util import numpy_support


def main():
    raw, nx, ny, nz, sx, sy, sz, repeats = sys.argv[1], *map(int, sys.argv[2:5]), *map(float, sys.argv[5:8]), int(sys.argv[8])
    voxels = np.fromfile(raw, dtype="<i2").reshape(nz, ny, nx)
    image = vtk.vtkImageData()
    image.SetDimensions(nx, ny, nz)
    image.SetSpacing(sx, sy, sz)
    image.SetOrigin(0, 0, 0)
    image.GetPointData().SetScalars(numpy_support.numpy_to_vtk(voxels.ravel(), deep=1, array_type=vtk.VTK_SHORT))
    planes = {}
    for line in sys.stdin:
        f = line.split()
        if f and f[0] == "plane":
            v = list(map(float, f[2:13]))
            planes[f[1]] = dict(origin=v[0:3], row=v[3:6], col=v[6:9], cs=v[9], rs=v[10], columns=int(f[13]), rows=int(f[14]),
                                slab=float(f[15]))

    def make(plane, slab, threads):
        r = vtk.vtkImageSlabReslice() if slab else vtk.vtkImageReslice()
        r.SetInputData(image)
        m = vtk.vtkMatrix4x4()
        normal = np.cross(plane["row"], plane["col"])
        for i in range(3):
            m.SetElement(i, 0, plane["row"][i])
            m.SetElement(i, 1, plane["col"][i])
            m.SetElement(i, 2, normal[i])
            m.SetElement(i, 3, plane["origin"][i])
        r.SetResliceAxes(m)
        r.SetInterpolationModeToLinear()
        r.SetOutputDimensionality(2)
        r.SetOutputSpacing(plane["cs"], plane["rs"], 1)
        r.SetOutputOrigin(0, 0, 0)
        r.SetOutputExtent(0, plane["columns"] - 1, 0, plane["rows"] - 1, 0, 0)
        if slab:
            r.SetBlendModeToMax()
            r.SetSlabThickness(plane["slab"])
            r.SetSlabResolution(sy)  # one sample per voxel step along the coronal normal, as ours
        if threads:
            r.SetNumberOfThreads(threads)
        return r

    cases = [("oblique", "oblique", False, 1), ("mip20", "mip20", True, 1), ("coronal", "coronal", False, 1),
             ("oblique-pool", "oblique", False, 0), ("mip20-pool", "mip20", True, 0)]
    for name, plane, slab, threads in cases:
        r = make(planes[plane], slab, threads)
        times = []
        for _ in range(repeats):
            r.Modified()
            t = time.perf_counter()
            r.Update()
            times.append((time.perf_counter() - t) * 1e3)
        times.sort()
        print(f"{name} {times[0]:.3f} {float(np.median(times)):.3f}", flush=True)
        if name == "mip20":
            print(f"# vtkImageSlabReslice samples across the slab: {r.GetSlabNumberOfSlices()}", file=sys.stderr)


if __name__ == "__main__":
    main()
