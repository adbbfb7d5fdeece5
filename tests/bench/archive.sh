#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Archive benchmark (not part of `make test`): fetching a study from a real PACS, Spectrum against the usual
# tools, side by side on the same data in one run. Orthanc (with its DICOMweb plugin) holds a 300-instance
# 512×512 CT from the demo generator.
#   DICOMweb: spectrum-cli fetch (into the cache: parsed, verified, indexed; and into a folder) vs curl writing
#             the study's WADO-RS multipart answer to a file in one request; first instance vs curl of one instance.
#   DIMSE:    spectrum-cli fetch over C-GET vs DCMTK's getscu, with Nagle on (DCMTK's default) and off.
# Usage: tests/bench/archive.sh     (SLICES=300 RUNS=5)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
bin=$repo/build/bin
SLICES=${SLICES:-300}
RUNS=${RUNS:-5}
[ -x "$bin/spectrum-cli" ] || { echo "build first: make build" >&2; exit 1; }
if ! command -v bc >/dev/null; then SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo; $SUDO apt-get install -y -qq bc >/dev/null; fi
command -v Orthanc >/dev/null || { echo "Orthanc missing: scripts/install-deps.sh" >&2; exit 1; }

work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
freeport() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
now() { date +%s.%N; }
best() { sort -g | head -1; }
median() { sort -g | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }

http=$(freeport); dicom=$(freeport)
plugin=$(dpkg -L orthanc-dicomweb | grep 'plugins/.*\.so$' | head -1)
cat > "$work/orthanc.json" <<JSON
{ "Name": "bench", "StorageDirectory": "$work/storage", "IndexDirectory": "$work/index", "HttpPort": $http,
  "DicomPort": $dicom, "DicomAet": "BENCHPACS", "RemoteAccessAllowed": false, "AuthenticationEnabled": false,
  "DicomModalities": { "SPECTRUM": ["SPECTRUM", "127.0.0.1", 4242], "GETSCU": ["GETSCU", "127.0.0.1", 4243] },
  "Plugins": ["$plugin"], "DicomWeb": { "Enable": true, "Root": "/dicom-web/" } }
JSON
Orthanc "$work/orthanc.json" >"$work/orthanc.log" 2>&1 & pids+=($!)
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$http/system" >/dev/null && break; sleep 0.2; done

echo "generating and loading a ${SLICES}-slice CT …"
"$bin/spectrum-cli" demo --out "$work/demo" --ct-slices "$SLICES" --only demo-ct >/dev/null
TCP_NODELAY=1 storescu -aec BENCHPACS 127.0.0.1 "$dicom" "$work"/demo/demo-ct/*.dcm
study=$(curl -sf "http://127.0.0.1:$http/dicom-web/studies" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["0020000D"]["Value"][0])')
one=$(curl -sf "http://127.0.0.1:$http/dicom-web/studies/$study/instances?limit=1" | /usr/bin/python3 -c 'import json,sys; d=json.load(sys.stdin)[0]; print(d["0020000E"]["Value"][0], d["00080018"]["Value"][0])')
read -r series sop <<<"$one"
bytes=$(du -cb "$work"/demo/demo-ct/*.dcm | tail -1 | cut -f1)

export SPECTRUM_CONFIG=$work/stores.json SPECTRUM_CACHE_DIR=$work/cache
"$bin/spectrum-cli" stores add web --kind dicomweb --url "http://127.0.0.1:$http/dicom-web" --max-parallel "${PARALLEL:-6}" >/dev/null
"$bin/spectrum-cli" stores add pacs --kind dimse --host 127.0.0.1 --port "$dicom" --aet BENCHPACS --our-aet SPECTRUM >/dev/null

declare -A T ALL  # best time, and every time, per name
once() {  # name, command…: one timed run into T[name] (the best so far kept)
  local name=$1; shift
  rm -rf "$work/cache" "$work/out" "$work/getscu" "$work/curl.out"; mkdir -p "$work/getscu"
  local t0; t0=$(now)
  "$@" >"$work/last.log" 2>&1 || { echo "failed: $name" >&2; tail -5 "$work/last.log" >&2; exit 1; }
  local t; t=$(echo "$(now) - $t0" | bc -l)
  if [ -z "${T[$name]:-}" ] || [ "$(echo "$t < ${T[$name]}" | bc -l)" = 1 ]; then T[$name]=$t; fi
  ALL[$name]="${ALL[$name]:-} $t"
}
run_best() {  # name, command…: best wall time of RUNS
  for _ in $(seq "$RUNS"); do once "$@"; done
}
first_best() {  # the best "first instance after" of RUNS spectrum fetches
  local times=()
  for _ in $(seq "$RUNS"); do
    rm -rf "$work/cache"
    "$bin/spectrum-cli" fetch --store web "$study" 2>&1 | grep -o 'first instance complete after [0-9.]*' | awk '{print $5}' > "$work/first" || true
    times+=("$(cat "$work/first")")
  done
  printf '%s\n' "${times[@]}" | best
}

# The DICOMweb runs in turn (curl, Spectrum, curl, Spectrum …), the best of each kept: on a shared machine both
# then see the same quiet and busy moments, rather than one of them a busier minute than the other.
for _ in $(seq "$RUNS"); do
  once "curl WADO-RS study (one multipart answer to a file)" curl -sf -o "$work/curl.out" -H 'Accept: multipart/related; type="application/dicom"' "http://127.0.0.1:$http/dicom-web/studies/$study"
  once "spectrum fetch over DICOMweb into the cache" "$bin/spectrum-cli" fetch --store web "$study"
  once "spectrum fetch over DICOMweb into a folder" "$bin/spectrum-cli" fetch --store web "$study" --out "$work/out"
  once "curl WADO-RS one instance" curl -sf -o "$work/curl.out" -H 'Accept: multipart/related; type="application/dicom"' "http://127.0.0.1:$http/dicom-web/studies/$study/series/$series/instances/$sop"
done
T["spectrum first complete instance (DICOMweb)"]=$(first_best)
run_best "getscu, DCMTK defaults (Nagle on)" getscu -aet GETSCU -aec BENCHPACS -k "0008,0052=STUDY" -k "0020,000D=$study" -od "$work/getscu" 127.0.0.1 "$dicom"
run_best "getscu with TCP_NODELAY=1" env TCP_NODELAY=1 getscu -aet GETSCU -aec BENCHPACS -k "0008,0052=STUDY" -k "0020,000D=$study" -od "$work/getscu" 127.0.0.1 "$dicom"
run_best "spectrum fetch over DIMSE (C-GET) into the cache" "$bin/spectrum-cli" fetch --store pacs "$study"

echo
printf '%-58s %9s %10s %9s\n' "study: $SLICES instances, $((bytes / 1048576)) MiB (best of $RUNS)" seconds "MB/s" median
for k in "curl WADO-RS study (one multipart answer to a file)" "curl WADO-RS one instance" "spectrum fetch over DICOMweb into the cache" \
         "spectrum fetch over DICOMweb into a folder" "spectrum first complete instance (DICOMweb)" "getscu, DCMTK defaults (Nagle on)" \
         "getscu with TCP_NODELAY=1" "spectrum fetch over DIMSE (C-GET) into the cache"; do
  case $k in *"one instance"*|*"first complete"*) rate="" ;; *) rate=$(awk "BEGIN{printf \"%.0f\", $bytes/${T[$k]}/1e6}") ;; esac
  med=$(if [ -n "${ALL[$k]:-}" ]; then echo "${ALL[$k]}" | tr ' ' '\n' | grep . | median; fi)
  printf '%-58s %9.3f %10s %9s\n' "$k" "${T[$k]}" "$rate" "${med:+$(printf '%.3f' "$med")}"
done
echo
echo "ratios (speed, higher is better for Spectrum):"
awk "BEGIN{printf \"  whole study, DICOMweb into the cache / curl study       = %.2f×  (goal ≥ 1.0×)\n\", ${T["curl WADO-RS study (one multipart answer to a file)"]}/${T["spectrum fetch over DICOMweb into the cache"]}}"
web_median=$(echo "${ALL["spectrum fetch over DICOMweb into the cache"]}" | tr ' ' '\n' | grep . | median)
curl_median=$(echo "${ALL["curl WADO-RS study (one multipart answer to a file)"]}" | tr ' ' '\n' | grep . | median)
awk "BEGIN{printf \"  the same, median against median                          = %.2f×\n\", $curl_median/$web_median}"
awk "BEGIN{printf \"  first instance / curl of one instance: Spectrum takes %.2f× curl's time  (goal ≤ 2×)\n\", ${T["spectrum first complete instance (DICOMweb)"]}/${T["curl WADO-RS one instance"]}}"
awk "BEGIN{printf \"  DIMSE C-GET into the cache / getscu with TCP_NODELAY=1 = %.2f×  (goal ≥ 1.0×)\n\", ${T["getscu with TCP_NODELAY=1"]}/${T["spectrum fetch over DIMSE (C-GET) into the cache"]}}"
awk "BEGIN{printf \"  DIMSE C-GET into the cache / getscu with DCMTK defaults = %.2f×\n\", ${T["getscu, DCMTK defaults (Nagle on)"]}/${T["spectrum fetch over DIMSE (C-GET) into the cache"]}}"
echo "  (spectrum's times include starting the process, opening the cache and, for the cache, indexing each instance;"
echo "   its first-instance time is measured inside the process from the start of the fetch)"
