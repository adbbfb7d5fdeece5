# SPDX-License-Identifier: Apache-2.0
# Sourced by the benchmark scripts (after `set -euo pipefail`, with `bin` set): a scratch folder cleaned on exit
# with every process started into `pids`, free loopback ports, best and median of a column of numbers, and an
# Orthanc with its DICOMweb plugin on loopback.

work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

freeport() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# "best median" of the numbers on stdin, one per line ("- -" for none).
stats() { sort -n | awk '{a[NR]=$1} END {if (NR==0) {print "- -"; exit} m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; print a[1], m}'; }

# start_orthanc NAME AET: Orthanc with DICOMweb in $work/NAME, answering once up; sets `http` and `dicom` (ports).
start_orthanc() {
  command -v Orthanc >/dev/null || { echo "Orthanc missing: scripts/install-deps.sh" >&2; exit 1; }
  http=$(freeport); dicom=$(freeport)
  local plugin
  plugin=$(dpkg -L orthanc-dicomweb | grep 'plugins/.*\.so$' | head -1)
  mkdir -p "$work/$1"
  cat > "$work/$1/orthanc.json" <<JSON
{ "Name": "$1", "StorageDirectory": "$work/$1/storage", "IndexDirectory": "$work/$1/index", "HttpPort": $http,
  "DicomPort": $dicom, "DicomAet": "$2", "RemoteAccessAllowed": false, "AuthenticationEnabled": false,
  "Plugins": ["$plugin"], "DicomWeb": { "Enable": true, "Root": "/dicom-web/" } }
JSON
  Orthanc "$work/$1/orthanc.json" >"$work/$1/orthanc.log" 2>&1 & pids+=($!)
  for _ in $(seq 100); do curl -sf "http://127.0.0.1:$http/system" >/dev/null && return 0; sleep 0.2; done
  echo "Orthanc did not start: $work/$1/orthanc.log" >&2
  exit 1
}
