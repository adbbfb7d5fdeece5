#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Large studies (issue 42): the workstation opening a CT of N slices from an archive on loopback while it is scrolled,
# beside `spectrum-cli fetch` of the same study and the archive's own answer to one request for the whole study
# (`curl` of the WADO-RS study to /dev/null: what Orthanc can serve, the floor under both), same run, interleaved.
# For each N (SIZES, default "300 3000 10000") one table row: GUI all cached, CLI fetch, archive, GUI ÷ CLI, GUI and
# CLI ms per slice, first image, the longest event-loop stall (and the events that took longest, from
# SPECTRUM_TRACE_STALLS), and the GUI's peak and final resident memory. Not part of `make test`.
# Goals: longest stall ≤ 16 ms; GUI ÷ CLI ≤ 1.1×; per-slice cost flat (≤ 1.1× that at the smallest N); the GUI's
# memory within its budget (the decoded-image cache, 1 GiB by default) plus a constant, whatever N.
# Usage: tests/bench/large.sh      (SIZES="300 3000 10000" ROUNDS=1 TRACE_MS=8)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
bin=${BIN:-$repo/build/bin}
SIZES=${SIZES:-300 3000 10000}
ROUNDS=${ROUNDS:-1}
TRACE_MS=${TRACE_MS:-8}
[ -x "$bin/spectrum-stallbench" ] || { echo "build first: make build" >&2; exit 1; }
command -v storescu >/dev/null || { echo "DCMTK missing: scripts/install-deps.sh" >&2; exit 1; }

# shellcheck source=benchlib.sh
. "$here/benchlib.sh"
export SPECTRUM_KEYRING=off
status=0
printf '| N slices | GUI all cached | CLI fetch | archive (curl) | GUI ÷ CLI | GUI ms/slice | CLI ms/slice | first image | longest stall | 99th pct | GUI peak RSS | GUI RSS at end |\n' > "$work/table"
printf '|---|---|---|---|---|---|---|---|---|---|---|---|\n' >> "$work/table"
for n in $SIZES; do
  echo "== $n slices"
  # One archive per size: the previous study's instances would slow Orthanc's index, not ours.
  start_orthanc "large$n" LARGEPACS
  rm -rf "$work/demo"
  "$bin/spectrum-cli" demo --out "$work/demo" --ct-slices "$n" --only demo-ct >/dev/null
  TCP_NODELAY=1 storescu -aec LARGEPACS 127.0.0.1 "$dicom" --scan-directories "$work/demo/demo-ct"
  study=$(curl -sf "http://127.0.0.1:$http/dicom-web/studies" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["0020000D"]["Value"][0])')
  bytes=$(du -cb "$work"/demo/demo-ct | tail -1 | cut -f1)
  rm -rf "$work/demo"
  export SPECTRUM_CONFIG=$work/stores-$n.json
  "$bin/spectrum-cli" stores add pacs --kind dicomweb --url "http://127.0.0.1:$http/dicom-web" >/dev/null
  echo "study: $n instances, $((bytes / 1048576)) MiB; $ROUNDS round(s), GUI, CLI and archive interleaved"
  : > "$work/gui"; : > "$work/cli"; : > "$work/curl"; : > "$work/first"; : > "$work/stall"; : > "$work/p99"; : > "$work/peak"; : > "$work/end"
  for round in $(seq "$ROUNDS"); do
    rm -rf "$work/cache-gui" "$work/cache-cli"
    out=$(SPECTRUM_TRACE_STALLS=$TRACE_MS "$bin/spectrum-stallbench" --store pacs --study "$study" --cache "$work/cache-gui" --give-up $((300 + n / 10)) 2>"$work/trace-$n-$round") || status=1
    echo "$out" | sed 's/^/  gui: /'
    echo "$out" | sed -n 's/.*all cached \([0-9]*\) ms.*/\1/p' >> "$work/gui"
    echo "$out" | sed -n 's/.*first image \([0-9]*\) ms.*/\1/p' >> "$work/first"
    echo "$out" | sed -n 's/.*longest stall \([0-9.]*\) ms.*/\1/p' >> "$work/stall"
    echo "$out" | sed -n 's/.*99th percentile \([0-9.]*\) ms.*/\1/p' >> "$work/p99"
    echo "$out" | sed -n 's/.*peak resident \([0-9]*\) MiB.*/\1/p' >> "$work/peak"
    echo "$out" | sed -n 's/.*at the end \([0-9]*\) MiB.*/\1/p' >> "$work/end"
    if grep -q '^stall:' "$work/trace-$n-$round"; then
      echo "  gui: the events that took longest (SPECTRUM_TRACE_STALLS=$TRACE_MS):"
      { grep '^stall:' "$work/trace-$n-$round" | sort -t' ' -k2 -rn | head -5 | sed 's/^/    /'; } || true
      echo "    … $(grep -c '^stall:' "$work/trace-$n-$round") event(s) of ${TRACE_MS} ms or more in all"
    fi
    { grep -v '^stall:' "$work/trace-$n-$round" | head -5 | sed 's/^/  gui stderr: /'; } || true
    start=$(date +%s%N)
    SPECTRUM_CACHE_DIR=$work/cache-cli "$bin/spectrum-cli" fetch --store pacs "$study" >/dev/null 2>&1 || status=1
    ms=$(( ($(date +%s%N) - start) / 1000000 ))
    echo "  cli: spectrum-cli fetch, whole run: $ms ms"
    echo "$ms" >> "$work/cli"
    start=$(date +%s%N)
    curl -sf -o /dev/null -H 'Accept: multipart/related; type="application/dicom"' "http://127.0.0.1:$http/dicom-web/studies/$study" || status=1
    ms=$(( ($(date +%s%N) - start) / 1000000 ))
    echo "  archive: curl of the WADO-RS study: $ms ms"
    echo "$ms" >> "$work/curl"
  done
  rm -rf "$work/cache-gui" "$work/cache-cli"
  read -r gb gm < <(stats < "$work/gui")
  read -r cb cm < <(stats < "$work/cli")
  read -r ab _ < <(stats < "$work/curl")
  read -r fb _ < <(stats < "$work/first")
  sw=$(sort -n "$work/stall" | tail -1)
  pw=$(sort -n "$work/p99" | tail -1)
  peak=$(sort -n "$work/peak" | tail -1)
  end=$(sort -n "$work/end" | tail -1)
  ratio=$(awk "BEGIN{printf \"%.2f\", $gb/$cb}")
  echo "  all cached: GUI best $gb ms (median $gm); CLI best $cb ms (median $cm); archive $ab ms; GUI ÷ CLI ${ratio}× (goal ≤ 1.1×); longest stall $sw ms (goal ≤ 16 ms); peak RSS $peak MiB"
  printf '| %s | %s ms | %s ms | %s ms | %s× | %s | %s | %s ms | %s ms | %s ms | %s MiB | %s MiB |\n' "$n" "$gb" "$cb" "$ab" "$ratio" \
    "$(awk "BEGIN{printf \"%.2f\", $gb/$n}")" "$(awk "BEGIN{printf \"%.2f\", $cb/$n}")" "$fb" "$sw" "$pw" "$peak" "$end" >> "$work/table"
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  pids=()
  rm -rf "$work/large$n"
done
echo
cat "$work/table"
exit $status
