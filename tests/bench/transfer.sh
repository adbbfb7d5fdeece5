#!/usr/bin/env bash
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
echo bench-token > "$work/token"
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
for n in 1 4; do
  read -r s c < <(timed "$bin/spectrum-cli" get "$url/blob" - --streams $n); row "spectrum get, $n stream(s), to memory" "$s" "$c" mem
done
for n in 1 4; do
  read -r s c < <(timed "$bin/spectrum-cli" get "$url/blob" "$work/out.bin" --streams $n); row "spectrum get, $n stream(s), to a file" "$s" "$c" file
done
read -r s c < <(timed curl -sf -o "$work/out.bin" "http://127.0.0.1:$nport/blob.bin"); row "curl -o from nginx" "$s" "$c" file
read -r s c < <(timed aria2c -q -x 8 -s 8 -k 1M --allow-overwrite=true --file-allocation=none -d "$work" -o aria.out "http://127.0.0.1:$nport/blob.bin"); row "aria2c -x 8 from nginx" "$s" "$c" file

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
printf '%-58s %9s %10s %12s %10s\n' "loopback, ${SIZE_MB} MiB" seconds "MB/s" "CPU s/GiB" ratio
base_mem=""; base_file=""; base_push=""
for r in "${rows[@]}"; do
  IFS='|' read -r name s c group <<<"$r"
  mbs=$(awk "BEGIN{printf \"%.0f\", $bytes/$s/1e6}")
  cpg=$(awk "BEGIN{printf \"%.2f\", $c/($bytes/1073741824)}")
  case $group in
    mem) [ -z "$base_mem" ] && base_mem=$s; ratio=$(awk "BEGIN{printf \"%.2f× iperf3\", $base_mem/$s}") ;;
    file) if [ "$name" = "curl -o from nginx" ]; then base_file=$s; fi; ratio="" ;;
    push) [ -z "$base_push" ] && base_push=$s; ratio="" ;;
  esac
  printf '%-58s %9s %10s %12s %10s\n' "$name" "$s" "$mbs" "$cpg" "$ratio"
  [ "$group" = push ] && last_push=$s
done
spectrum_file1=$(printf '%s\n' "${rows[@]}" | grep "1 stream(s), to a file" | cut -d'|' -f2)
spectrum_file4=$(printf '%s\n' "${rows[@]}" | grep "4 stream(s), to a file" | cut -d'|' -f2)
aria=$(printf '%s\n' "${rows[@]}" | grep "aria2c -x 8" | cut -d'|' -f2)
push_sp=$(printf '%s\n' "${rows[@]}" | grep "spectrum put" | cut -d'|' -f2)
push_curl=$(printf '%s\n' "${rows[@]}" | grep "curl -T" | cut -d'|' -f2)
echo
echo "ratios (speed, higher is better for Spectrum):"
awk "BEGIN{printf \"  into a file: spectrum 4 streams / curl -o     = %.2f×\n\", $base_file/$spectrum_file4}"
awk "BEGIN{printf \"  into a file: spectrum 4 streams / aria2c -x 8 = %.2f×\n\", $aria/$spectrum_file4}"
awk "BEGIN{printf \"  into a file: spectrum 1 stream  / curl -o     = %.2f×\n\", $base_file/$spectrum_file1}"
awk "BEGIN{printf \"  push: spectrum put / curl -T (WebDAV)         = %.2f×\n\", $push_curl/$push_sp}"
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
