#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The workstation opening a study from an archive against `spectrum-cli fetch` of the same study, same run
# (not part of `make test`). spectrum-stallbench is the real GUI (offscreen): it opens a 300-slice CT from a
# DICOMweb store into an empty cache and is scrolled through it while it streams in; it prints when the first
# image was on screen, when the whole study was cached, and the longest time the GUI's event loop could not run.
# `spectrum-cli fetch` brings the same study into another empty cache. Both run ROUNDS times, interleaved; the
# script prints best and median of each and their ratio. Orthanc on loopback, once directly and once behind the
# user-space link emulator (100 Mbit/s shared, 20 ms round trip: a hospital's remote archive), where the link's
# own limit (the study's bytes at 100 Mbit/s) is the peer.
# Goals (issue 18): all cached ≤ 1.3× the CLI; first image ≤ 100 ms (loopback); longest stall ≤ 16 ms;
# behind the link ≥ 85 % of the link.
# Usage: tests/bench/stall.sh     (SLICES=300 ROUNDS=3)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
bin=$repo/build/bin
SLICES=${SLICES:-300}
ROUNDS=${ROUNDS:-3}
[ -x "$bin/spectrum-stallbench" ] || { echo "build first: make build" >&2; exit 1; }
command -v Orthanc >/dev/null || { echo "Orthanc missing: scripts/install-deps.sh" >&2; exit 1; }

# shellcheck source=benchlib.sh
. "$here/benchlib.sh"
start_orthanc stall STALLPACS
slow=$(freeport)
/usr/bin/python3 "$here/linkemu.py" --listen "$slow" --upstream "$http" --rtt-ms 20 --window-kib 512 --capacity-mbit 100 >"$work/linkemu.log" 2>&1 & pids+=($!)

echo "generating and loading a ${SLICES}-slice CT …"
"$bin/spectrum-cli" demo --out "$work/demo" --ct-slices "$SLICES" --only demo-ct >/dev/null
TCP_NODELAY=1 storescu -aec STALLPACS 127.0.0.1 "$dicom" "$work"/demo/demo-ct/*.dcm
study=$(curl -sf "http://127.0.0.1:$http/dicom-web/studies" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["0020000D"]["Value"][0])')

export SPECTRUM_CONFIG=$work/stores.json
"$bin/spectrum-cli" stores add pacs --kind dicomweb --url "http://127.0.0.1:$http/dicom-web" >/dev/null
"$bin/spectrum-cli" stores add remote --kind dicomweb --url "http://127.0.0.1:$slow/dicom-web" >/dev/null
bytes=$(du -cb "$work"/demo/demo-ct/*.dcm | tail -1 | cut -f1)
echo "study: $SLICES instances, $((bytes / 1048576)) MiB; $ROUNDS rounds, GUI and CLI interleaved"
status=0
for store in pacs remote; do
  echo "== $store"
  : > "$work/gui-$store"; : > "$work/cli-$store"; : > "$work/first-$store"; : > "$work/stall-$store"
  for round in $(seq "$ROUNDS"); do
    rm -rf "$work/cache-gui" "$work/cache-cli"
    out=$("$bin/spectrum-stallbench" --store "$store" --study "$study" --cache "$work/cache-gui" 2>/dev/null) || status=1  # 1: a stall over the goal
    echo "$out" | sed 's/^/  gui: /'
    echo "$out" | sed -n 's/.*all cached \([0-9]*\) ms.*/\1/p' >> "$work/gui-$store"
    echo "$out" | sed -n 's/.*first image \([0-9]*\) ms.*/\1/p' >> "$work/first-$store"
    echo "$out" | sed -n 's/.*longest stall \([0-9.]*\) ms.*/\1/p' >> "$work/stall-$store"
    start=$(date +%s%N)
    SPECTRUM_CACHE_DIR=$work/cache-cli "$bin/spectrum-cli" fetch --store "$store" "$study" >/dev/null 2>&1 || status=1
    ms=$(( ($(date +%s%N) - start) / 1000000 ))
    echo "  cli: spectrum-cli fetch, whole run: $ms ms"
    echo "$ms" >> "$work/cli-$store"
  done
  read -r gb gm < <(stats < "$work/gui-$store")
  read -r cb cm < <(stats < "$work/cli-$store")
  read -r fb fm < <(stats < "$work/first-$store")
  read -r sb sm < <(stats < "$work/stall-$store")
  sw=$(sort -n "$work/stall-$store" | tail -1)
  echo "  all cached: GUI best $gb ms, median $gm ms; CLI best $cb ms, median $cm ms;" \
       "ratio best $(awk "BEGIN{printf \"%.2f\", $gb/$cb}")x, median $(awk "BEGIN{printf \"%.2f\", $gm/$cm}")x (goal <= 1.3x)"
  echo "  first image: best $fb ms, median $fm ms (goal <= 100 ms on loopback); longest stall: best $sb ms, median $sm ms, worst $sw ms (goal <= 16 ms)"
  if [ "$store" = remote ]; then
    linkms=$(awk "BEGIN{printf \"%.0f\", $bytes * 8 / 100e6 * 1000}")
    echo "  the link's limit: $linkms ms for the study's bytes at 100 Mbit/s; GUI at $(awk "BEGIN{printf \"%.0f\", 100*$linkms/$gb}") % (best), $(awk "BEGIN{printf \"%.0f\", 100*$linkms/$gm}") % (median) of the link (goal >= 85 %)"
  fi
done
exit $status
