#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Reading against priors, timed in the real GUI (offscreen; not part of `make test`). spectrum-priorsbench runs
# one measurement per process; this script runs them interleaved, ROUNDS times, and prints best and median:
#  - opening the demo head CT alone (one pane) against opening it with its prior laid out beside it by its
#    hanging protocol (two panes), the prior already in the cache: until every pane shows its image;
#  - 50 hanging protocols matched, planned and laid out on an open viewer;
#  - from Orthanc on loopback into an empty cache: the CT's first image, and its prior's (not prefetched) after
#    it was asked for;
#  - 600 wheel notches through the CT with its prior linked: the longest event-loop stall.
# Goals (issue 20): with prior ≤ 1.1× alone; protocols ≤ 5 ms; the prior's first image ≤ 2× the current's;
# longest stall ≤ 16 ms.
# Usage: tests/bench/priors.sh     (ROUNDS=5)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
bin=$repo/build/bin
ROUNDS=${ROUNDS:-5}
[ -x "$bin/spectrum-priorsbench" ] || { echo "build first: make build" >&2; exit 1; }
command -v Orthanc >/dev/null || { echo "Orthanc missing: scripts/install-deps.sh" >&2; exit 1; }
# shellcheck source=benchlib.sh
. "$here/benchlib.sh"
bench() { "$bin/spectrum-priorsbench" "$@" 2>/dev/null | grep -v '^$'; }

echo "seeding the demo into a cache (the head CT 200 slices, its prior 100) …"
bench open --cache "$work/cache" --alone >/dev/null
: > "$work/alone"; : > "$work/prior"
status=0
for round in $(seq "$ROUNDS"); do
  a=$(bench open --cache "$work/cache" --alone); echo "  $a"
  echo "$a" | sed -n 's/.* in \([0-9.]*\) ms.*/\1/p' >> "$work/alone"
  b=$(bench open --cache "$work/cache" --with-prior); echo "  $b"
  echo "$b" | sed -n 's/.* in \([0-9.]*\) ms.*/\1/p' >> "$work/prior"
done
read -r aBest aMed < <(stats < "$work/alone"); read -r bBest bMed < <(stats < "$work/prior")
echo "open: alone best $aBest / median $aMed ms; with its prior best $bBest / median $bMed ms"
awk -v a="$aBest" -v b="$bBest" -v am="$aMed" -v bm="$bMed" 'BEGIN {printf "  with prior / alone: %.2fx best, %.2fx median (goal <= 1.1x)\n", b/a, bm/am}'

p=$(bench protocols --cache "$work/cache") || status=1
echo "$p"

start_orthanc priors PRIORSPACS
"$bin/spectrum-cli" demo --out "$work/demo" --only demo-ct --only demo-ct-prior >/dev/null
TCP_NODELAY=1 storescu -aec PRIORSPACS 127.0.0.1 "$dicom" "$work"/demo/demo-ct/*.dcm "$work"/demo/demo-ct-prior/*.dcm
export SPECTRUM_CONFIG=$work/stores.json
"$bin/spectrum-cli" stores add pacs --kind dicomweb --url "http://127.0.0.1:$http/dicom-web" >/dev/null
study=$("$bin/spectrum-cli" demo --out "$work/uids" --ct-slices 1 --only demo-ct | sed -n 's/^demo-ct  //p')
: > "$work/current"; : > "$work/priorfirst"
for round in $(seq "$ROUNDS"); do
  rm -rf "$work/cache-remote"
  r=$(bench remote --store pacs --study "$study" --cache "$work/cache-remote") || true
  echo "  $r"
  echo "$r" | sed -n "s/.*current's first image \([0-9.]*\) ms.*/\1/p" >> "$work/current"
  echo "$r" | sed -n "s/.*prior's first image \([0-9.]*\) ms.*/\1/p" >> "$work/priorfirst"
done
read -r cBest cMed < <(stats < "$work/current"); read -r pBest pMed < <(stats < "$work/priorfirst")
echo "remote: the CT's first image best $cBest / median $cMed ms; its prior's best $pBest / median $pMed ms"
awk -v c="$cMed" -v p="$pMed" 'BEGIN {printf "  prior / current (medians): %.2fx (goal <= 2x)\n", p/c}'

: > "$work/stall"
for round in $(seq 3); do
  s=$(bench scroll --cache "$work/cache") || status=1
  echo "  $s"
  echo "$s" | sed -n 's/.*longest stall \([0-9.]*\) ms.*/\1/p' >> "$work/stall"
done
echo "scroll: longest stall $(sort -n "$work/stall" | tail -1) ms, worst of 3 (goal <= 16 ms)"
exit $status
