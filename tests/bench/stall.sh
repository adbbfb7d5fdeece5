#!/usr/bin/env bash
# Event-loop stall benchmark (not part of `make test`): the workstation opens a 300-slice CT from a remote
# DICOMweb store and is scrolled through it while the study streams in; spectrum-stallbench measures the
# longest time the GUI's event loop could not run. Goal: < 50 ms. Orthanc on loopback, once directly and once
# behind the user-space link emulator (100 Mbit/s, 20 ms round trip: a hospital's remote archive).
# Usage: tests/bench/stall.sh     (SLICES=300)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
bin=$repo/build/bin
SLICES=${SLICES:-300}
[ -x "$bin/spectrum-stallbench" ] || { echo "build first: make build" >&2; exit 1; }
command -v Orthanc >/dev/null || { echo "Orthanc missing: scripts/install-deps.sh" >&2; exit 1; }

work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
freeport() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

http=$(freeport); dicom=$(freeport); slow=$(freeport)
plugin=$(dpkg -L orthanc-dicomweb | grep 'plugins/.*\.so$' | head -1)
cat > "$work/orthanc.json" <<JSON
{ "Name": "stall", "StorageDirectory": "$work/storage", "IndexDirectory": "$work/index", "HttpPort": $http,
  "DicomPort": $dicom, "DicomAet": "STALLPACS", "RemoteAccessAllowed": false, "AuthenticationEnabled": false,
  "Plugins": ["$plugin"], "DicomWeb": { "Enable": true, "Root": "/dicom-web/" } }
JSON
Orthanc "$work/orthanc.json" >"$work/orthanc.log" 2>&1 & pids+=($!)
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$http/system" >/dev/null && break; sleep 0.2; done
/usr/bin/python3 "$here/linkemu.py" --listen "$slow" --upstream "$http" --rtt-ms 20 --window-kib 512 --capacity-mbit 100 >"$work/linkemu.log" 2>&1 & pids+=($!)

echo "generating and loading a ${SLICES}-slice CT …"
"$bin/spectrum-cli" demo --out "$work/demo" --ct-slices "$SLICES" --only demo-ct >/dev/null
TCP_NODELAY=1 storescu -aec STALLPACS 127.0.0.1 "$dicom" "$work"/demo/demo-ct/*.dcm
study=$(curl -sf "http://127.0.0.1:$http/dicom-web/studies" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["0020000D"]["Value"][0])')

export SPECTRUM_CONFIG=$work/stores.json
"$bin/spectrum-cli" stores add pacs --kind dicomweb --url "http://127.0.0.1:$http/dicom-web" >/dev/null
"$bin/spectrum-cli" stores add remote --kind dicomweb --url "http://127.0.0.1:$slow/dicom-web" >/dev/null
status=0
for store in pacs remote; do
  echo "== $store"
  "$bin/spectrum-stallbench" --store "$store" --study "$study" --cache "$work/cache-$store" 2>/dev/null || status=1
done
exit $status
