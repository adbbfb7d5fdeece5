#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Integrated layer processing benchmark (not part of `make test`): the demo CR (2048 × 2500, 16 bits, 10 MB)
# fetched from spectrum-blobd through a throttled link (tests/bench/linkemu.py), through a 3-filter chain —
# filtered while it arrives vs fetched first and filtered after, in the same run (spectrum-ilpbench).
# Goal: overlapped ≤ 1.15 × max(transfer, filtering).
# Usage: tests/bench/ilp.sh   (LINK_MBIT=400 RTT_MS=10 WINDOW_KIB=4096 REPEATS=3; extra arguments go to bench ilp)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=$(cd "$here/../.." && pwd)/build/bin
[ -x "$bin/spectrum-cli" ] && [ -x "$bin/spectrum-ilpbench" ] || { echo "build first: make build" >&2; exit 1; }
LINK_MBIT=${LINK_MBIT:-400} RTT_MS=${RTT_MS:-10} WINDOW_KIB=${WINDOW_KIB:-4096} REPEATS=${REPEATS:-3}
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
freeport() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
bport=$(freeport); eport=$(freeport)
"$bin/spectrum-blobd" --root "$work/root" --port "$bport" --allow-no-auth >"$work/blobd.log" 2>&1 & pids+=($!)
for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$bport") 2>/dev/null && break; sleep 0.1; done
"$bin/spectrum-cli" demo --out "$work/demo" --only demo-cr >/dev/null
cr=$(ls "$work"/demo/demo-cr/*.dcm | head -1)
"$bin/spectrum-cli" put "blob://127.0.0.1:$bport/cr" "$cr" >/dev/null 2>&1
/usr/bin/python3 "$here/linkemu.py" --listen "$eport" --upstream "$bport" --rtt-ms "$RTT_MS" --window-kib "$WINDOW_KIB" --capacity-mbit "$LINK_MBIT" >/dev/null & pids+=($!)
sleep 0.5
echo "tests/bench/ilp.sh ($(date +%F); link ${LINK_MBIT} Mbit/s, RTT ${RTT_MS} ms, window ${WINDOW_KIB} KiB; $(nproc) cores)"
"$bin/spectrum-ilpbench" "blob://127.0.0.1:$eport/cr" --repeats "$REPEATS" --streams 1 "$@"
