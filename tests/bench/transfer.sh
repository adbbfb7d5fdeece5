#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Transfer benchmark (not part of `make test`): Spectrum's blob protocol against the usual peers, side by side
# on the same data in one run, on loopback. Prints times and ratios; absolute numbers on shared machines are noise.
#   1. loopback pull: memory-to-memory vs iperf3 (one TCP stream); into a file vs curl -o and aria2c -x 8 (nginx)
#   2. wide-area emulation (tests/bench/linkemu.py): 1…16 streams vs the ideal, and vs aria2c -x 16
#   3. push with end-to-end acknowledgement vs curl -T (nginx WebDAV PUT)
# Usage: tests/bench/transfer.sh            (SIZE_MB=1024 WAN_MB=32 RTT_MS=40 WINDOW_KIB=64 LINK_MBIT=100)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
bin=$repo/build/bin
SIZE_MB=${SIZE_MB:-1024}
WAN_MB=${WAN_MB:-32}
RTT_MS=${RTT_MS:-40}
WINDOW_KIB=${WINDOW_KIB:-64}
LINK_MBIT=${LINK_MBIT:-100}
RUNS=${RUNS:-3}

need=()
for tool in iperf3:iperf3 nginx:nginx-light aria2c:aria2 curl:curl; do
  command -v "${tool%%:*}" >/dev/null || need+=("${tool##*:}")
done
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi
[ -x "$bin/spectrum-blobd" ] || { echo "build first: make build" >&2; exit 1; }

work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
freeport() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# best wall time of $RUNS runs of a command; prints "seconds cpu_seconds"
timed() {
  local best="" cpu=""
  for _ in $(seq "$RUNS"); do
    rm -f "$work/aria.out" "$work/aria.out.aria2" "$work/wan.out" "$work/wan.out.aria2"
    /usr/bin/time -o "$work/time.out" -f "%e %U %S" "$@" >"$work/out.log" 2>"$work/err.log" || { echo "failed: $*" >&2; cat "$work/err.log" "$work/out.log" | tail -n 8 >&2; exit 1; }
    read -r wall user sys < <(tail -1 "$work/time.out")
    if [ -z "$best" ] || awk "BEGIN{exit !($wall < $best)}"; then best=$wall; cpu=$(awk "BEGIN{print $user+$sys}"); fi
  done
  echo "$best $cpu"
}

echo "preparing ${SIZE_MB} MiB of random data in $work …"
head -c "${SIZE_MB}M" /dev/urandom > "$work/blob.bin"
head -c "${WAN_MB}M" "$work/blob.bin" > "$work/wan.bin"
mkdir -p "$work/www" "$work/tmp" "$work/root"
chmod 755 "$work"; chmod 777 "$work/www" "$work/tmp"; chmod 644 "$work/blob.bin" "$work/wan.bin"  # nginx workers run unprivileged
ln "$work/blob.bin" "$work/www/blob.bin"
ln "$work/wan.bin" "$work/www/wan.bin"
(umask 077; echo bench-token > "$work/token")
export SPECTRUM_TOKEN=bench-token

bport=$(freeport); nport=$(freeport); iport=$(freeport)
"$bin/spectrum-blobd" --root "$work/root" --port "$bport" --token-file "$work/token" >"$work/blobd.log" 2>&1 & pids+=($!)
cat > "$work/nginx.conf" <<NGINX
daemon off; worker_processes 2; pid $work/nginx.pid; error_log $work/nginx.err;
events { worker_connections 1024; }
http { access_log off; sendfile on; tcp_nopush on; client_max_body_size 0; client_body_temp_path $work/tmp;
  server { listen 127.0.0.1:$nport; root $work/www; dav_methods PUT; create_full_put_path on; } }
NGINX
nginx -c "$work/nginx.conf" -p "$work" & pids+=($!)
iperf3 -s -p "$iport" >/dev/null 2>&1 & pids+=($!)
sleep 1

url=blob://127.0.0.1:$bport
bytes=$((SIZE_MB * 1024 * 1024))
rows=()
row() { rows+=("$1|$2|$3|$4"); }  # name | seconds | cpu seconds | group

# 3. push (also stores the blob for the pulls)
read -r s c < <(timed "$bin/spectrum-cli" put "$url/blob" "$work/blob.bin" --streams 4); row "spectrum put (4 streams, fsync'd, SHA-256 checked)" "$s" "$c" push
read -r s c < <(timed curl -sf -T "$work/blob.bin" "http://127.0.0.1:$nport/upload.bin"); row "curl -T to nginx WebDAV" "$s" "$c" push
"$bin/spectrum-cli" put "$url/wan" "$work/wan.bin" >/dev/null 2>&1

# 1. loopback pulls
read -r s c < <(timed iperf3 -c 127.0.0.1 -p "$iport" -n "${SIZE_MB}M" -l 128K); row "iperf3, one TCP stream (memory)" "$s" "$c" mem
# In-process pulls into one destination touched beforehand (see tests/bench/pullbench.cpp): like iperf3's reused
# buffer, so that the kernel's zeroing of fresh pages is not what is measured; that cost is printed separately.
for n in 1 4; do
  read -r s c touch < <("$bin/spectrum-pullbench" "$url/blob" $n "$RUNS"); row "spectrum pull, $n stream(s), memory, hash tree checked" "$s" "$c" mem
  read -r s c touch < <("$bin/spectrum-pullbench" "$url/blob" $n "$RUNS" notree); row "spectrum pull, $n stream(s), memory, whole SHA-256 checked" "$s" "$c" mem
  read -r s c touch < <("$bin/spectrum-pullbench" "$url/blob" $n "$RUNS" nosha); row "spectrum pull, $n stream(s), memory, XXH3 per frame only" "$s" "$c" mem
done
for n in 1 4; do
  read -r s c < <(timed "$bin/spectrum-cli" get "$url/blob" "$work/out.bin" --streams $n); row "spectrum get, $n stream(s), to a file, hash tree checked" "$s" "$c" file
  rm -f "$work/out.bin" "$work/out.bin.partial"
done
read -r s c < <(timed "$bin/spectrum-cli" get "$url/blob" "$work/out.bin" --streams 1 --no-sha256); row "spectrum get, 1 stream(s), to a file, XXH3 per frame only" "$s" "$c" file
read -r s c < <(timed curl -sf -o "$work/out.bin" "http://127.0.0.1:$nport/blob.bin"); row "curl -o from nginx" "$s" "$c" file
read -r s c < <(timed aria2c -q -x 8 -s 8 -k 1M --allow-overwrite=true --file-allocation=none -d "$work" -o aria.out "http://127.0.0.1:$nport/blob.bin"); row "aria2c -x 8 from nginx" "$s" "$c" file
sha_cpu=$( { /usr/bin/time -f "%U %S" openssl dgst -sha256 "$work/blob.bin" >/dev/null; } 2>&1 | awk '{print $1+$2}')

# 2. wide-area emulation
eport=$(freeport); hport=$(freeport)
/usr/bin/python3 "$here/linkemu.py" --listen "$eport" --upstream "$bport" --rtt-ms "$RTT_MS" --window-kib "$WINDOW_KIB" --capacity-mbit "$LINK_MBIT" >/dev/null & pids+=($!)
/usr/bin/python3 "$here/linkemu.py" --listen "$hport" --upstream "$nport" --rtt-ms "$RTT_MS" --window-kib "$WINDOW_KIB" --capacity-mbit "$LINK_MBIT" >/dev/null & pids+=($!)
sleep 1
per_conn=$(awk "BEGIN{print $WINDOW_KIB*1024/($RTT_MS/1000)}")
link=$(awk "BEGIN{print $LINK_MBIT*1e6/8}")
wanrows=()
for n in 1 2 4 8 16; do
  read -r s c < <(RUNS=1 timed "$bin/spectrum-cli" get "blob://127.0.0.1:$eport/wan" - --streams $n --chunk 1024)
  wanrows+=("spectrum get, $n stream(s)|$s|$n")
done
read -r s c < <(RUNS=1 timed aria2c -q -x 16 -s 16 -k 1M --allow-overwrite=true --file-allocation=none -d "$work" -o wan.out "http://127.0.0.1:$hport/wan.bin")
wanrows+=("aria2c -x 16 -s 16|$s|16")

echo
printf '%-60s %9s %10s %12s\n' "loopback, ${SIZE_MB} MiB" seconds "MB/s" "CPU s/GiB"
for r in "${rows[@]}"; do
  IFS='|' read -r name s c group <<<"$r"
  mbs=$(awk "BEGIN{printf \"%.0f\", $bytes/$s/1e6}")
  cpg=$(awk "BEGIN{printf \"%.2f\", $c/($bytes/1073741824)}")
  printf '%-60s %9s %10s %12s\n' "$name" "$s" "$mbs" "$cpg"
done
pick() { printf '%s\n' "${rows[@]}" | grep -F "$1" | head -1 | cut -d'|' -f2; }
iperf=$(pick "iperf3"); curl_s=$(pick "curl -o"); aria=$(pick "aria2c -x 8")
echo
echo "ratios (speed, higher is better for Spectrum):"
for n in 1 4; do
  awk "BEGIN{printf \"  memory, $n stream(s): XXH3 only / iperf3 = %.2f×   hash tree checked / iperf3 = %.2f×   whole SHA-256 checked / iperf3 = %.2f×\n\", $iperf/$(pick "pull, $n stream(s), memory, XXH3"), $iperf/$(pick "pull, $n stream(s), memory, hash tree"), $iperf/$(pick "pull, $n stream(s), memory, whole SHA")}"
done
awk "BEGIN{printf \"  into a file, 1 stream: XXH3 only / curl -o = %.2f×   hash tree checked / curl -o = %.2f×   / aria2c -x 8 = %.2f×\n\", $curl_s/$(pick "1 stream(s), to a file, XXH3"), $curl_s/$(pick "1 stream(s), to a file, hash tree"), $aria/$(pick "1 stream(s), to a file, hash tree")}"
awk "BEGIN{printf \"  push: spectrum put / curl -T (WebDAV)         = %.2f×\n\", $(pick "curl -T")/$(pick "spectrum put")}"
echo "  (SHA-256 of ${SIZE_MB} MiB alone: $sha_cpu CPU-s with openssl here; touching a fresh GiB of memory: $touch s)"
echo
wanbytes=$((WAN_MB * 1024 * 1024))
printf '%-58s %9s %10s %14s %8s\n' "emulated WAN: RTT ${RTT_MS} ms, window ${WINDOW_KIB} KiB, link ${LINK_MBIT} Mbit/s, ${WAN_MB} MiB" seconds "MB/s" "ideal MB/s" "of ideal"
aria_wan=""
for r in "${wanrows[@]}"; do
  IFS='|' read -r name s n <<<"$r"
  rate=$(awk "BEGIN{print $wanbytes/$s}")
  ideal=$(awk "BEGIN{i=$n*$per_conn; if (i>$link) i=$link; print i}")
  printf '%-58s %9s %10.2f %14.2f %7.0f%%\n' "$name" "$s" "$(awk "BEGIN{print $rate/1e6}")" "$(awk "BEGIN{print $ideal/1e6}")" "$(awk "BEGIN{print 100*$rate/$ideal}")"
  case $name in aria2c*) aria_wan=$s ;; *"16 stream"*) sp16=$s ;; esac
done
awk "BEGIN{printf \"  spectrum 16 streams / aria2c -x 16 through the same link = %.2f×\n\", $aria_wan/$sp16}"
