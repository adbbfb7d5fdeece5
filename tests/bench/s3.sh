#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# S3 benchmark (not part of `make test`): spectrum-cli's S3 client against the AWS CLI (botocore's transfer manager,
# PyPI, in a venv made here) on the same objects of the tests' S3 server (versitygw, loopback), interleaved round by
# round, each at several concurrencies — the peer's best is what we are held to. Issue 23's goals: GET ≥ 1.2× the
# peer on loopback and ≥ 1.5× over the emulated WAN; multipart PUT ≥ 1.0×.
# Usage: tests/bench/s3.sh [ROUNDS]      (SIZE_MB=1024 WAN_MB=64 WAN="40:256:400" OURS="4 8 16" PEER="4 10 16")
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
bin=$repo/build/bin
ROUNDS=${1:-3}
SIZE_MB=${SIZE_MB:-1024}
WAN_MB=${WAN_MB:-64}
WAN=${WAN:-"40:256:400"}
OURS=${OURS:-"4 8 16"}
PEER=${PEER:-"4 10 16"}
gw=${SPECTRUM_PEERS_DIR:-$HOME/.cache/spectrum/peers}/versitygw-v1.8.0/versitygw
[ -x "$bin/spectrum-cli" ] || { echo "build first: make build" >&2; exit 1; }
[ -x "$gw" ] || { echo "no versitygw: scripts/install-deps.sh builds it" >&2; exit 1; }
venv=$repo/build/bench-venv
if [ ! -x "$venv/bin/aws" ]; then
  /usr/bin/python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check awscli==1.46.3
fi

# shellcheck source=benchlib.sh
source "$here/benchlib.sh"  # $work, pids, cleanup, freeport, stats

export AWS_ACCESS_KEY_ID=AKIABENCH AWS_SECRET_ACCESS_KEY=bench/secret AWS_REGION=us-east-1 AWS_DEFAULT_REGION=us-east-1
sport=$(freeport)
mkdir -p "$work/gw" "$work/out"
"$gw" --port "127.0.0.1:$sport" --access "$AWS_ACCESS_KEY_ID" --secret "$AWS_SECRET_ACCESS_KEY" --keep-alive --quiet posix "$work/gw" & pids+=($!)
sleep 0.5
endpoint=http://127.0.0.1:$sport
aws() { "$venv/bin/aws" --endpoint-url "$AWS_ENDPOINT_URL" "$@"; }
export AWS_ENDPOINT_URL=$endpoint
aws s3api create-bucket --bucket bench >/dev/null
head -c "${SIZE_MB}M" /dev/urandom > "$work/blob.bin"
head -c "${WAN_MB}M" "$work/blob.bin" > "$work/wan.bin"
# The peer's concurrency and part size through its config file (as a site would set them).
peercfg() { printf '[default]\ns3 =\n  max_concurrent_requests = %s\n  multipart_chunksize = 16MB\n  multipart_threshold = 16MB\n' "$1" > "$work/aws-$1.cfg"; echo "$work/aws-$1.cfg"; }

declare -A times=()
run() {  # name command… : the wall time into times[name]
  local name=$1; shift
  local t0 t1
  t0=$(date +%s.%N)
  "$@" >/dev/null 2>"$work/err.log" || { echo "failed: $name" >&2; tail -5 "$work/err.log" >&2; exit 1; }
  t1=$(date +%s.%N)
  times[$name]+="$(awk "BEGIN{print $t1-$t0}") "
}
# Seed the objects both read.
"$bin/spectrum-cli" put s3://bench/blob "$work/blob.bin" >/dev/null 2>&1
"$bin/spectrum-cli" put s3://bench/wan "$work/wan.bin" >/dev/null 2>&1

for round in $(seq "$ROUNDS"); do
  for n in $OURS; do
    run "put spectrum $n" "$bin/spectrum-cli" put "s3://bench/p-ours" "$work/blob.bin" --streams "$n"
    run "get spectrum $n" "$bin/spectrum-cli" get s3://bench/blob "$work/out/ours.bin" --streams "$n"; rm -f "$work/out/ours.bin"*
  done
  for n in $PEER; do
    cfg=$(peercfg "$n")
    # Each part with its SHA-256, as ours go (botocore's default is a CRC32, which spares the client and the store
    # a SHA-256 of every byte each: on two shared cores most of the difference).
    run "put aws $n" env AWS_CONFIG_FILE="$cfg" "$venv/bin/aws" --endpoint-url "$endpoint" s3 cp --only-show-errors --checksum-algorithm SHA256 "$work/blob.bin" s3://bench/p-aws
    run "get aws $n" env AWS_CONFIG_FILE="$cfg" "$venv/bin/aws" --endpoint-url "$endpoint" s3 cp --only-show-errors s3://bench/blob "$work/out/aws.bin"; rm -f "$work/out/aws.bin"
  done
done
cmp <("$bin/spectrum-cli" get s3://bench/p-aws - 2>/dev/null) "$work/blob.bin" || { echo "the peer's upload differs" >&2; exit 1; }

IFS=: read -r rtt win mbit <<<"$WAN"
eport=$(freeport)
/usr/bin/python3 "$here/linkemu.py" --listen "$eport" --upstream "$sport" --rtt-ms "$rtt" --window-kib "$win" --capacity-mbit "$mbit" >/dev/null & pids+=($!)
sleep 0.5
wan=http://127.0.0.1:$eport
for round in $(seq "$ROUNDS"); do
  for n in $OURS; do
    run "wan spectrum $n" "$bin/spectrum-cli" get s3://bench/wan "$work/out/w-ours.bin" --endpoint "$wan" --streams "$n"; rm -f "$work/out/w-ours.bin"*
  done
  for n in $PEER; do
    cfg=$(peercfg "$n")
    run "wan aws $n" env AWS_CONFIG_FILE="$cfg" "$venv/bin/aws" --endpoint-url "$wan" s3 cp --only-show-errors s3://bench/wan "$work/out/w-aws.bin"; rm -f "$work/out/w-aws.bin"
  done
done

timesOf() { printf '%s\n' ${times[$1]} | stats; }
echo "s3.sh $ROUNDS rounds, $(date -u +%Y-%m-%d), $(nproc) cores; versitygw 1.8.0 on loopback; aws-cli 1.46.3 (botocore's transfer manager)"
for part in put get wan; do
  mb=$SIZE_MB; [ $part = wan ] && mb=$WAN_MB
  case $part in put) title="multipart PUT of $SIZE_MB MiB, loopback" ;; get) title="GET of $SIZE_MB MiB to a file, loopback" ;;
                wan) title="GET of $WAN_MB MiB to a file through the emulated WAN (RTT $rtt ms, window $win KiB, $mbit Mbit/s)" ;; esac
  echo; echo "$title"
  printf '  %-22s %9s %9s %9s\n' "" "best s" "median s" "MB/s"
  ourbest=""; ourmed=""; peerbest=""; peermed=""
  for who in spectrum aws; do
    list=$OURS; [ $who = aws ] && list=$PEER
    for n in $list; do
      read -r b m < <(timesOf "$part $who $n")
      label="$who, $n at once"
      printf '  %-22s %9.2f %9.2f %9.0f\n' "$label" "$b" "$m" "$(awk "BEGIN{print $mb*1.048576/$b}")"
      if [ $who = spectrum ]; then
        if [ -z "$ourbest" ] || awk "BEGIN{exit !($b < $ourbest)}"; then ourbest=$b; fi
        if [ -z "$ourmed" ] || awk "BEGIN{exit !($m < $ourmed)}"; then ourmed=$m; fi
      else
        if [ -z "$peerbest" ] || awk "BEGIN{exit !($b < $peerbest)}"; then peerbest=$b; fi
        if [ -z "$peermed" ] || awk "BEGIN{exit !($m < $peermed)}"; then peermed=$m; fi
      fi
    done
  done
  awk "BEGIN{printf \"  spectrum / aws (speed, each at its best count): %.2f× best to best, %.2f× median to median\n\", $peerbest/$ourbest, $peermed/$ourmed}"
done
