#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Reformatting benchmark (not part of `make test`): Spectrum's planes against VTK's (python3-vtk9, from Debian) on the
# same 512 × 512 × 600 CT-sized volume of 16-bit voxels, in the same run, interleaved round by round:
#   oblique   a double-oblique plane, trilinear, one thread   vs vtkImageReslice        (goal ≥ 2×)
#   mip20     a 20 mm coronal MIP slab, one thread            vs vtkImageSlabReslice    (goal ≥ 2×)
#   coronal   a thin coronal plane, one thread (a crosshair drag redraws three of these)
#   *-pool    the same on every core (VTK's threads, our compute pool)
# Prints best and median milliseconds of each and the ratio VTK / Spectrum. Then, in the workstation (offscreen):
#   drag      the crosshair dragged across the MPR layout of a 300-slice CT (spectrum-mprdragbench): planes redrawn
#             per second per pane (goal ≥ 30) and the event loop's longest stall (goal ≤ 16 ms)
#   live      a 300-slice CT opened from Orthanc (DICOMweb, loopback) into an empty cache, MPR asked for as soon as
#             the study opens (its first look, before the archive lists it): the first coronal plane on screen
#             after the first slice arrived (goal ≤ 250 ms)
# Writes tests/bench/last-mpr-run.txt.
# Usage: tests/bench/mpr.sh [ROUNDS [REPEATS]]   (MPR_PARTS="reslice drag live", the default, or a part of it)
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
bin="$repo/build/bin"
rounds=${1:-3}; repeats=${2:-7}
parts=${MPR_PARTS:-reslice drag live}
want() { [[ " $parts " == *" $1 "* ]]; }
/usr/bin/python3 -c 'import vtk' 2>/dev/null || { echo "python3-vtk9 missing: scripts/install-deps.sh" >&2; exit 1; }
cmake --build "$repo/build" -j 2 --target spectrum-mprbench spectrum-mprdragbench >/dev/null
nx=512; ny=512; nz=600; sx=0.7; sy=0.7; sz=0.8
args="$*"
main() {
# shellcheck source=benchlib.sh
source "$repo/tests/bench/benchlib.sh"   # in this subshell: its scratch folder and peers go when it ends
echo "tests/bench/mpr.sh $args   ($(date +%F), $(nproc) cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs))"
if want reslice; then
raw="$work/volume.raw"
# A CT-like volume: a body (soft tissue, bone ring, air outside) with noise, so no plane is all one value.
/usr/bin/python3 - "$raw" $nx $ny $nz <<'PY'
import sys, numpy as np
raw, nx, ny, nz = sys.argv[1], *map(int, sys.argv[2:])
y, x = np.mgrid[0:ny, 0:nx]
r = np.hypot((x - nx / 2) / (nx * 0.42), (y - ny / 2) / (ny * 0.35))
base = np.where(r < 0.85, 40, np.where(r < 1.0, 900, -1000)).astype(np.int16)
rng = np.random.default_rng(5)
with open(raw, "wb") as f:
    for z in range(nz):
        f.write((base + rng.integers(-60, 60, size=(ny, nx), dtype=np.int16) + np.int16(z % 50)).astype("<i2").tobytes())
PY
echo "volume ${nx} × ${ny} × ${nz}, ${sx} × ${sy} × ${sz} mm, 16-bit; ${rounds} rounds of ${repeats} repeats, Spectrum then VTK in each"
: > "$work/ours"; : > "$work/vtk"
for r in $(seq "$rounds"); do
  "$bin/spectrum-mprbench" "$raw" $nx $ny $nz $sx $sy $sz "$repeats" > "$work/round"
  grep -v '^plane\|^present' "$work/round" >> "$work/ours"
  grep '^plane' "$work/round" | /usr/bin/python3 "$repo/tests/bench/mprpeer.py" "$raw" $nx $ny $nz $sx $sy $sz "$repeats" >> "$work/vtk" 2>"$work/vtk.err"
done
grep '^present' "$work/round" | sed 's/^/  /'
sed 's/^# /  /' "$work/vtk.err" | sort -u
{
  printf "%-14s %20s %20s %10s %10s\n" case "Spectrum best/median" "VTK best/median" "ratio" "(median)"
  for c in oblique mip20 coronal oblique-pool mip20-pool; do
    read -r ob om < <(awk -v c=$c '$1==c {print $2}' "$work/ours" | stats)
    read -r _ omed < <(awk -v c=$c '$1==c {print $3}' "$work/ours" | stats)
    read -r vb _ < <(awk -v c=$c '$1==c {print $2}' "$work/vtk" | stats)
    read -r _ vmed < <(awk -v c=$c '$1==c {print $3}' "$work/vtk" | stats)
    awk -v c=$c -v ob=$ob -v om=$omed -v vb=$vb -v vm=$vmed 'BEGIN {printf "%-14s %9.2f / %7.2f ms %9.2f / %7.2f ms %9.2f× %9.2f×\n", c, ob, om, vb, vm, vb/ob, vm/om}'
  done
}
fi

echo
echo "== in the workstation (offscreen), ${rounds} rounds"
if want drag; then
for r in $(seq "$rounds"); do "$bin/spectrum-mprdragbench" --ct-slices 300 --seconds 3 2>/dev/null | grep '^drag'; done | tee "$work/drag"
read -r worst_best worst_median < <(sed 's/.*stall max \([0-9.]*\).*/\1/' "$work/drag" | stats)
echo "  longest stall while dragging: best ${worst_best} ms, median ${worst_median} ms (goal <= 16)"
fi
want live || return 0
start_orthanc mpr MPRPACS
"$bin/spectrum-cli" demo --out "$work/demo" --ct-slices 300 --only demo-ct >/dev/null
TCP_NODELAY=1 storescu -aec MPRPACS 127.0.0.1 "$dicom" "$work"/demo/demo-ct/*.dcm
study=$(curl -sf "http://127.0.0.1:$http/dicom-web/studies" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["0020000D"]["Value"][0])')
export SPECTRUM_CONFIG=$work/stores.json
"$bin/spectrum-cli" stores add pacs --kind dicomweb --url "http://127.0.0.1:$http/dicom-web" >/dev/null
for r in $(seq "$rounds"); do
  rm -rf "$work/cache"
  "$bin/spectrum-mprdragbench" --store pacs --study "$study" --cache "$work/cache" 2>/dev/null | grep '^live'
done | tee "$work/live"
read -r live_best live_median < <(sed 's/.*(\([0-9.]*\) ms after the first slice).*/\1/' "$work/live" | stats)
echo "  first coronal after the first slice: best ${live_best} ms, median ${live_median} ms (goal <= 250)"
}
record="$repo/tests/bench/last-mpr-run.txt"
[[ "$parts" == "reslice drag live" ]] || record=/dev/null  # a part alone is not the record
main 2>&1 | tee "$record"
