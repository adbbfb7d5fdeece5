#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Import benchmark (not part of `make test`): `spectrum-cli import` of N small instances (pydicom-written, 64 × 64
# CT, 500 to a study) into an empty disk cache, against copying the same files with cp and one sync (the bytes
# alone, made durable: the floor an import that checks, indexes and syncs them cannot beat). Interleaved, each
# round into fresh folders. Issue 23's goal: ≥ 5,000 instances/s for 20,000.
# Usage: tests/bench/import.sh [ROUNDS]      (N=20000; OLD=path/to/an/older/spectrum-cli to compare with)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
bin=$repo/build/bin
ROUNDS=${1:-3}
N=${N:-20000}
[ -x "$bin/spectrum-cli" ] || { echo "build first: make build" >&2; exit 1; }
# shellcheck source=benchlib.sh
source "$here/benchlib.sh"  # $work, pids, cleanup, freeport, stats

/usr/bin/python3 "$repo/tests/support/importfiles.py" "$work/in" "$N"
declare -A times=()
for round in $(seq "$ROUNDS"); do
  rm -rf "$work/cache" "$work/copy"; sync
  t0=$(date +%s.%N); SPECTRUM_CACHE_DIR="$work/cache" "$bin/spectrum-cli" import "$work/in" >"$work/err.log" 2>&1; t1=$(date +%s.%N)
  grep -q "$N imported" "$work/err.log" || { echo "import failed:" >&2; tail -3 "$work/err.log" >&2; exit 1; }
  times[spectrum]+="$(awk "BEGIN{print $t1-$t0}") "
  if [ -n "${OLD:-}" ]; then
    rm -rf "$work/cache"; sync
    t0=$(date +%s.%N); SPECTRUM_CACHE_DIR="$work/cache" "$OLD" import "$work/in" >/dev/null 2>&1; t1=$(date +%s.%N)
    times[old]+="$(awk "BEGIN{print $t1-$t0}") "
  fi
  t0=$(date +%s.%N); cp -r "$work/in" "$work/copy" && sync -f "$work/copy"; t1=$(date +%s.%N)
  times[cp]+="$(awk "BEGIN{print $t1-$t0}") "
done
echo "import.sh $ROUNDS rounds, $N instances ($(du -sh "$work/in" | cut -f1)), $(date -u +%Y-%m-%d), $(nproc) cores"
printf '  %-34s %9s %9s %14s\n' "" "best s" "median s" "instances/s"
for who in spectrum old cp; do
  [ -n "${times[$who]:-}" ] || continue
  read -r b m < <(printf '%s\n' ${times[$who]} | stats)
  case $who in spectrum) label="spectrum-cli import" ;; old) label="spectrum-cli import (OLD)" ;; cp) label="cp -r and sync -f" ;; esac
  printf '  %-34s %9.2f %9.2f %14.0f\n' "${label:0:34}" "$b" "$m" "$(awk "BEGIN{print $N/$b}")"
done
read -r sb sm < <(printf '%s\n' ${times[spectrum]} | stats)
read -r cb cm < <(printf '%s\n' ${times[cp]} | stats)
awk "BEGIN{printf \"  spectrum / cp (time): %.2f× best, %.2f× median; goal: %d instances in ≤ %.1f s (5,000/s)\n\", $sb/$cb, $sm/$cm, $N, $N/5000}"
