#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Adaptive stream count (not part of `make test`): `spectrum-cli get --streams auto` against the same command with
# fixed counts, through the user-space WAN emulator (tests/bench/linkemu.py), interleaved round by round on the same
# blob. Issue 23's goal: auto within 1.1× of the best fixed count.
#   Links (RTT ms:window KiB:Mbit/s), default "40:256:400 25:256:480" — the issue's path, and the one auto was
#   measured on before (1.69× the time of 8 streams then).
# Usage: tests/bench/autostreams.sh [ROUNDS]      (SIZE_MB=64 LINKS="…" COUNTS="4 8 12 16")
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
bin=$repo/build/bin
ROUNDS=${1:-5}
SIZE_MB=${SIZE_MB:-64}
LINKS=${LINKS:-"40:256:400 25:256:480"}
COUNTS=${COUNTS:-"4 8 12 16"}
[ -x "$bin/spectrum-blobd" ] || { echo "build first: make build" >&2; exit 1; }

# shellcheck source=benchlib.sh
source "$here/benchlib.sh"  # $work, pids, cleanup, freeport, stats

head -c "${SIZE_MB}M" /dev/urandom > "$work/blob.bin"
(umask 077; echo bench-token > "$work/token")
export SPECTRUM_TOKEN=bench-token
bport=$(freeport)
"$bin/spectrum-blobd" --root "$work/root" --port "$bport" --token-file "$work/token" >"$work/blobd.log" 2>&1 & pids+=($!)
sleep 0.5
"$bin/spectrum-cli" put "blob://127.0.0.1:$bport/wan" "$work/blob.bin" >/dev/null 2>&1

echo "autostreams.sh $ROUNDS rounds, ${SIZE_MB} MiB, $(date -u +%Y-%m-%d), $(nproc) cores"
for link in $LINKS; do
  IFS=: read -r rtt win mbit <<<"$link"
  eport=$(freeport)
  /usr/bin/python3 "$here/linkemu.py" --listen "$eport" --upstream "$bport" --rtt-ms "$rtt" --window-kib "$win" --capacity-mbit "$mbit" >/dev/null & emu=$!
  pids+=($emu)
  sleep 0.5
  declare -A times=()
  for round in $(seq "$ROUNDS"); do
    for n in $COUNTS auto; do
      t0=$(date +%s.%N)
      "$bin/spectrum-cli" get "blob://127.0.0.1:$eport/wan" - --streams "$n" 2>"$work/err.log" >/dev/null \
        || { echo "failed: --streams $n" >&2; cat "$work/err.log" >&2; exit 1; }
      t1=$(date +%s.%N)
      times[$n]+="$(awk "BEGIN{print $t1-$t0}") "
      used=$(grep -o '[0-9]* stream(s)' "$work/err.log" | head -1)
      [ "$n" = auto ] && times[used]+="${used%% *} "
    done
  done
  per_conn=$(awk "BEGIN{print $win*1024/($rtt/1000)/1e6}")
  echo
  echo "link: RTT $rtt ms, window $win KiB (one stream ≤ $(printf %.1f "$per_conn") MB/s), $mbit Mbit/s ($(awk "BEGIN{printf \"%.0f\", $mbit/8}") MB/s)"
  printf '  %-8s %10s %10s %10s\n' streams "best s" "median s" "MB/s"
  bestfixed=""; bestfixedmed=""
  for n in $COUNTS auto; do
    read -r best med < <(printf '%s\n' ${times[$n]} | stats)
    printf '  %-8s %10.2f %10.2f %10.1f\n' "$n" "$best" "$med" "$(awk "BEGIN{print $SIZE_MB*1.048576/$best}")"
    if [ "$n" != auto ]; then
      if [ -z "$bestfixed" ] || awk "BEGIN{exit !($best < $bestfixed)}"; then bestfixed=$best; fi
      if [ -z "$bestfixedmed" ] || awk "BEGIN{exit !($med < $bestfixedmed)}"; then bestfixedmed=$med; fi
    else
      autobest=$best; automed=$med
    fi
  done
  echo "  auto used: ${times[used]}streams"
  awk "BEGIN{printf \"  auto / best fixed: %.2f× best to best, %.2f× median to median (goal ≤ 1.10)\n\", $autobest/$bestfixed, $automed/$bestfixedmed}"
  kill "$emu" 2>/dev/null || true
  unset times
done
