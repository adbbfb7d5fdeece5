#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Disk-cache scale benchmark (not part of `make test`): a cache of N instances (N=1,000,000 by default; small
# synthetic ones, 200 a study, as fetches commit them), then, interleaved ROUNDS times, opened and searched by
# patient name — in one process (spectrum-cachebench: open and search times, resident memory) and as a user runs it
# (`spectrum-cli studies --patient-name`, wall time and peak memory by /usr/bin/time). Peer: the sqlite3 shell
# answering the same search from the same index file (SQLite alone, with no cache around it: the floor).
# And the workstation as a radiologist starts it on that cache: `spectrum --screenshot` (offscreen) opens the cache,
# lists every study in the browser and saves the window — wall time and peak memory by /usr/bin/time.
# Issue 23's goals: open ≤ 1 s, search ≤ 50 ms, RSS ≤ 200 MB.
# Usage: tests/bench/cache.sh [ROUNDS]      (N=…; KEEP=dir to keep the filled cache there and reuse it)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
bin=$repo/build/bin
ROUNDS=${1:-5}
N=${N:-1000000}
[ -x "$bin/spectrum-cachebench" ] && [ -x "$bin/spectrum" ] || { echo "build first: make build" >&2; exit 1; }
command -v sqlite3 >/dev/null || { echo "sqlite3 missing: apt-get install sqlite3" >&2; exit 1; }
# shellcheck source=benchlib.sh
source "$here/benchlib.sh"  # $work, pids, cleanup, freeport, stats

cache=${KEEP:-$work/cache}
if [ ! -f "$cache/index.sqlite" ]; then
  "$bin/spectrum-cachebench" fill "$cache" "$N" | tee "$work/fill.txt"
fi
name='COCOSON*'  # the patients of one family name: 1 in 400 (14 studies of 1,000,000 instances)
declare -A times=()
for round in $(seq "$ROUNDS"); do
  line=$("$bin/spectrum-cachebench" open "$cache" "$name")
  read -r _ o _ s _ studies _ _ _ blobs _ rss _ _ _ _ <<<"$line"
  times[open]+="$o "; times[search]+="$s "; times[rss]+="$rss "
  /usr/bin/time -f "%e %M" -o "$work/time.txt" env SPECTRUM_CACHE_DIR="$cache" "$bin/spectrum-cli" studies --patient-name "$name" >"$work/cli.txt" 2>/dev/null
  read -r wall kb <"$work/time.txt"
  times[cli]+="$(awk "BEGIN{print $wall*1000}") "; times[clirss]+="$(awk "BEGIN{print $kb/1000}") "
  t0=$(date +%s.%N)
  sqlite3 -readonly "$cache/index.sqlite" "SELECT study FROM studies WHERE name GLOB 'COCOSON*' ORDER BY sortkey DESC" >"$work/sqlite.txt"
  t1=$(date +%s.%N)
  times[sqlite]+="$(awk "BEGIN{print ($t1-$t0)*1000}") "
  mkdir -p "$work/home"
  /usr/bin/time -f "%e %M" -o "$work/time.txt" env QT_QPA_PLATFORM=offscreen HOME="$work/home" XDG_CONFIG_HOME="$work/home/.config" \
    SPECTRUM_CACHE_DIR="$cache" "$bin/spectrum" --screenshot "$work/list.png" >/dev/null 2>"$work/gui.txt" \
    || { echo "the workstation did not list the cache:" >&2; cat "$work/gui.txt" >&2; exit 1; }
  read -r wall kb <"$work/time.txt"
  times[gui]+="$(awk "BEGIN{print $wall*1000}") "; times[guirss]+="$(awk "BEGIN{print $kb/1000}") "
done
[ "$(wc -l <"$work/cli.txt")" = "$studies" ] || { echo "spectrum-cli found $(wc -l <"$work/cli.txt") studies, the bench $studies" >&2; exit 1; }
[ "$(wc -l <"$work/sqlite.txt")" = "$studies" ] || { echo "sqlite3 found $(wc -l <"$work/sqlite.txt") studies, the bench $studies" >&2; exit 1; }
echo "cache.sh $ROUNDS rounds, $blobs instances in $(du -sh "$cache" | cut -f1) ($(du -sh "$cache/index.sqlite" | cut -f1) of index), search '$name' → $studies studies, $(date -u +%Y-%m-%d), $(nproc) cores"
[ -f "$work/fill.txt" ] && sed 's/^/  /' "$work/fill.txt"
printf '  %-44s %9s %9s %8s\n' "" "best" "median" "goal"
row() { read -r b m < <(printf '%s\n' ${times[$1]} | stats); printf '  %-44s %9.1f %9.1f %8s\n' "$2" "$b" "$m" "$3"; }
row open "open the cache (ms)" "≤ 1000"
row search "search by patient name (ms)" "≤ 50"
row rss "resident memory after both (MB)" "≤ 200"
row cli "spectrum-cli studies --patient-name (ms)" ""
row clirss "spectrum-cli studies peak memory (MB)" "≤ 200"
row sqlite "sqlite3 shell, same search, same file (ms)" "peer"
row gui "workstation started, every study listed (ms)" ""
row guirss "workstation peak memory (MB)" "≤ 200"
[ -n "${SHOT:-}" ] && cp "$work/list.png" "$SHOT"
true
