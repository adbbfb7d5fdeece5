#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A working day (issue 42): the workstation opens STUDIES studies from an archive one after another (Orthanc with
# DICOMweb on loopback; STUDIES/5 patients, each with a CT and its prior, two chest radiographs and an MR: the demo's
# studies under new UIDs), scrolls each down and up once it is all here, closes it, and measures what it still holds
# (spectrum-soakbench): resident memory, the heap in use, file descriptors, threads, widgets, the disk cache's index
# and blobs (a disk budget of DISK_MIB, so that the cache fills and evicts during the warm-up), and each study's
# longest event-loop stall. After the warm-up (WARM_UP studies) every one of them must stay flat. Also checks that
# each study shows the patient asked for. Not part of `make test`.
# Usage: tests/bench/soak.sh      (STUDIES=300 SLICES=40 DISK_MIB=256 WARM_UP=60 SOAK_OUT=file)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
bin=${BIN:-$repo/build/bin}
STUDIES=${STUDIES:-300}
SLICES=${SLICES:-40}
DISK_MIB=${DISK_MIB:-256}
WARM_UP=${WARM_UP:-60}
[ -x "$bin/spectrum-soakbench" ] || { echo "build first: make build" >&2; exit 1; }
command -v storescu >/dev/null || { echo "DCMTK missing: scripts/install-deps.sh" >&2; exit 1; }
/usr/bin/python3 -c 'import pydicom' 2>/dev/null || { echo "python3-pydicom missing: scripts/install-deps.sh" >&2; exit 1; }

# shellcheck source=benchlib.sh
. "$here/benchlib.sh"
export SPECTRUM_KEYRING=off
copies=$(( (STUDIES + 4) / 5 ))
start_orthanc soak SOAKPACS
"$bin/spectrum-cli" demo --out "$work/demo" --ct-slices "$SLICES" >/dev/null
/usr/bin/python3 "$here/soakdata.py" "$work/demo" "$work/day" "$copies" > "$work/all"
head -n "$STUDIES" "$work/all" > "$work/studies"
echo "archive: $(wc -l < "$work/studies") studies of $copies patients, $(find "$work/day" -type f | wc -l) instances, $(du -sm "$work/day" | cut -f1) MiB"
TCP_NODELAY=1 storescu -aec SOAKPACS 127.0.0.1 "$dicom" --scan-directories --recurse "$work/day"
rm -rf "$work/day" "$work/demo"
export SPECTRUM_CONFIG=$work/stores.json
"$bin/spectrum-cli" stores add pacs --kind dicomweb --url "http://127.0.0.1:$http/dicom-web" >/dev/null
echo "the day: open, scroll down and up, close, each study; disk cache budget $DISK_MIB MiB; warm-up $WARM_UP studies"
status=0
"$bin/spectrum-soakbench" --store pacs --studies "$work/studies" --cache "$work/cache" --disk-budget-mib "$DISK_MIB" \
  --warm-up "$WARM_UP" >"$work/out" 2>"$work/stderr" || status=$?
{ grep -v -e '^$' -e 'propagateSizeHints' -e '^transfer row' "$work/stderr" | head -20 | sed 's/^/soakbench stderr: /'; } || true
# The first study and every 25th, then the verdict.
awk -F'\t' 'NR == 1 || ($1 ~ /^[0-9]+$/ && ($1 == 1 || $1 % 25 == 0))' "$work/out" | column -t -s $'\t'
sed -n '/^$/,$p' "$work/out"
[ -z "${SOAK_OUT:-}" ] || cp "$work/out" "$SOAK_OUT"  # every study's line, to keep
exit $status
