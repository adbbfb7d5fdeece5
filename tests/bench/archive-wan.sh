#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Does DicomWebClient's way around Qt 6.4's limit of 6 HTTP/1.1 connections per host and manager pay off?
# A study of many series in Orthanc, reached through the user-space link emulator (tests/bench/linkemu.py: each
# TCP connection limited to window/RTT, all together to a link capacity), fetched with maxParallel 1, 6, 12 and 24
# (one QNetworkAccessManager per 6 requests in flight). Not part of `make test`.
# Usage: tests/bench/archive-wan.sh   (SLICES=240 SERIES=24 RTT_MS=40 WINDOW_KIB=256 LINK_MBIT=1000)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
bin=$repo/build/bin
SLICES=${SLICES:-240}
SERIES=${SERIES:-24}
RTT_MS=${RTT_MS:-40}
WINDOW_KIB=${WINDOW_KIB:-256}
LINK_MBIT=${LINK_MBIT:-1000}
[ -x "$bin/spectrum-cli" ] || { echo "build first: make build" >&2; exit 1; }

work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
freeport() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

http=$(freeport); dicom=$(freeport); emu=$(freeport)
plugin=$(dpkg -L orthanc-dicomweb | grep 'plugins/.*\.so$' | head -1)
cat > "$work/orthanc.json" <<JSON
{ "Name": "bench", "StorageDirectory": "$work/storage", "IndexDirectory": "$work/index", "HttpPort": $http,
  "DicomPort": $dicom, "RemoteAccessAllowed": false, "AuthenticationEnabled": false,
  "Plugins": ["$plugin"], "DicomWeb": { "Enable": true, "Root": "/dicom-web/" } }
JSON
Orthanc "$work/orthanc.json" >"$work/orthanc.log" 2>&1 & pids+=($!)
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$http/system" >/dev/null && break; sleep 0.2; done

echo "a ${SLICES}-slice CT cut into $SERIES series …"
"$bin/spectrum-cli" demo --out "$work/demo" --ct-slices "$SLICES" --only demo-ct >/dev/null
i=0
for f in "$work"/demo/demo-ct/*.dcm; do
  s=$((i % SERIES + 1))
  dcmodify -nb -m "(0020,000e)=2.25.$((1000 + s))" -m "(0020,0011)=$s" "$f"
  i=$((i + 1))
done
TCP_NODELAY=1 storescu -aec ORTHANC 127.0.0.1 "$dicom" "$work"/demo/demo-ct/*.dcm
study=$(curl -sf "http://127.0.0.1:$http/dicom-web/studies" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["0020000D"]["Value"][0])')
/usr/bin/python3 "$here/linkemu.py" --listen "$emu" --upstream "$http" --rtt-ms "$RTT_MS" --window-kib "$WINDOW_KIB" --capacity-mbit "$LINK_MBIT" >/dev/null & pids+=($!)
sleep 1
bytes=$(du -cb "$work"/demo/demo-ct/*.dcm | tail -1 | cut -f1)

printf '\n%-44s %9s %10s\n' "$SERIES series, $((bytes / 1048576)) MiB, RTT $RTT_MS ms, window $WINDOW_KIB KiB" seconds "MB/s"
for p in 1 6 12 24; do
  export SPECTRUM_CONFIG=$work/stores-$p.json SPECTRUM_CACHE_DIR=$work/cache
  "$bin/spectrum-cli" stores add web --kind dicomweb --url "http://127.0.0.1:$emu/dicom-web" --max-parallel "$p" --timeout 120 >/dev/null
  rm -rf "$work/out"
  line=$("$bin/spectrum-cli" fetch --store web "$study" --out "$work/out" 2>&1 | tail -1)
  s=$(echo "$line" | grep -o 'in [0-9.]* s' | awk '{print $2}')
  printf '%-44s %9s %10.1f\n' "spectrum fetch, maxParallel $p ($(((p + 5) / 6)) manager(s))" "$s" "$(awk "BEGIN{print $bytes/$s/1e6}")"
done
