#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A study from S3 against the same study from a PACS (not part of `make test`): a 300-instance 512×512 CT from the
# demo generator, sent by spectrum-cli into the tests' S3 server (versitygw, loopback; our key layout and study
# index, stores/STORES.md) and into Orthanc (DICOMweb plugin, loopback), then fetched whole into a fresh cache from
# each, round by round, interleaved — the engine the workstation opens a study with (StoreRegistry::fetchStudy:
# parsed, checked, indexed, crash-safe). Issue 23's goal: from S3 ≤ 1.0× the time from Orthanc.
# Usage: tests/bench/s3study.sh [ROUNDS]      (SLICES=300 PARALLEL=6; PERF_S3=1: perf record of the S3 fetches into /tmp/s3perf.data)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
bin=$repo/build/bin
ROUNDS=${1:-5}
SLICES=${SLICES:-300}
PARALLEL=${PARALLEL:-6}
gw=${SPECTRUM_PEERS_DIR:-$HOME/.cache/spectrum/peers}/versitygw-v1.8.0/versitygw
[ -x "$bin/spectrum-cli" ] || { echo "build first: make build" >&2; exit 1; }
[ -x "$gw" ] || { echo "no versitygw: scripts/install-deps.sh builds it" >&2; exit 1; }
# shellcheck source=benchlib.sh
source "$here/benchlib.sh"  # $work, pids, cleanup, freeport, stats, start_orthanc

start_orthanc pacs BENCHPACS
sport=$(freeport)
mkdir -p "$work/gw/bench"  # versitygw's posix backend: a folder is a bucket
"$gw" --port "127.0.0.1:$sport" --access AKIABENCH --secret bench/secret --keep-alive --quiet posix "$work/gw" & pids+=($!)
for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$sport/" && break; sleep 0.1; done
(umask 077; printf 'bench/secret' > "$work/secret")

export SPECTRUM_CONFIG=$work/stores.json
"$bin/spectrum-cli" stores add web --kind dicomweb --url "http://127.0.0.1:$http/dicom-web" --max-parallel "$PARALLEL" >/dev/null
"$bin/spectrum-cli" stores add s3 --kind s3 --url "http://127.0.0.1:$sport" --bucket bench --access-key AKIABENCH \
  --secret-key-file "$work/secret" --max-parallel "$PARALLEL" >/dev/null

echo "generating a ${SLICES}-slice CT, sending it to Orthanc and to S3 …"
"$bin/spectrum-cli" demo --out "$work/demo" --ct-slices "$SLICES" --only demo-ct >/dev/null
files=("$work"/demo/demo-ct/*.dcm)
TCP_NODELAY=1 storescu -aec BENCHPACS 127.0.0.1 "$dicom" "${files[@]}"
SPECTRUM_CACHE_DIR=$work/seed-cache "$bin/spectrum-cli" export --store s3 "${files[@]}" >/dev/null
study=$(curl -sf "http://127.0.0.1:$http/dicom-web/studies" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["0020000D"]["Value"][0])')
bytes=$(du -cb "${files[@]}" | tail -1 | cut -f1)

declare -A times=() cpu=()
fetch() {  # name store: a whole fetch into a fresh cache, its wall time into times[name], our CPU seconds into cpu[name]
  rm -rf "$work/cache"
  local t0 t1
  t0=$(date +%s.%N)
  SPECTRUM_CACHE_DIR=$work/cache ${PERF_S3:+$([ "$2" = s3 ] && echo perf record -q -g -o /tmp/s3perf.data --)} /usr/bin/time -o "$work/cpu" -f "%U %S" \
    "$bin/spectrum-cli" fetch --store "$2" "$study" >"$work/fetch.log" 2>&1 || { echo "failed: $1" >&2; tail -5 "$work/fetch.log" >&2; exit 1; }
  t1=$(date +%s.%N)
  grep -q "^$SLICES instance(s)" "$work/fetch.log" || { echo "$1 brought less than the study:" >&2; cat "$work/fetch.log" >&2; exit 1; }
  times[$1]+="$(awk "BEGIN{print $t1-$t0}") "
  cpu[$1]+="$(awk '{print $1 + $2}' "$work/cpu") "
}
for _ in $(seq "$ROUNDS"); do
  fetch orthanc web
  fetch s3 s3
done
echo "s3study.sh $ROUNDS rounds, $SLICES instances ($((bytes / 1000000)) MB), $PARALLEL requests at once, $(date -u +%Y-%m-%d), $(nproc) cores"
read -r ob om < <(printf '%s\n' ${times[orthanc]} | stats)
read -r sb sm < <(printf '%s\n' ${times[s3]} | stats)
read -r _ oc < <(printf '%s\n' ${cpu[orthanc]} | stats)
read -r _ sc < <(printf '%s\n' ${cpu[s3]} | stats)
printf '  %-48s %8s %8s %12s\n' "" "best s" "median s" "our CPU s"
printf '  %-48s %8.3f %8.3f %12.2f\n' "from Orthanc over DICOMweb into the cache" "$ob" "$om" "$oc"
printf '  %-48s %8.3f %8.3f %12.2f\n' "from S3 into the cache (CRC32C checked)" "$sb" "$sm" "$sc"
printf '  S3 / Orthanc: %.2f× best, %.2f× median (goal ≤ 1.0×)\n' "$(awk "BEGIN{print $sb/$ob}")" "$(awk "BEGIN{print $sm/$om}")"
