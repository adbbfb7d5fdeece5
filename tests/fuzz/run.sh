#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs every libFuzzer target for a while, each from its kept inputs (tests/fuzz/inputs/TARGET) in a scratch
# corpus, so what it finds along the way does not land in the repository. A crash stops the run and leaves the
# input that caused it in tests/fuzz/crashes/: fix the bug, then keep the input as a regression
# (tests/fuzz/inputs/TARGET/regression-…), which tst_fuzzinputs replays in every test run.
# Usage: tests/fuzz/run.sh FUZZ_BIN_DIR [SECONDS_EACH]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=$1
seconds=${2:-60}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$here/crashes"
# The targets CMake built (SPECTRUM_FUZZ_TARGETS in tests/fuzz/CMakeLists.txt), one list for both.
IFS=";" read -r -a targets < "$bin/targets.txt" || true  # its one line may end without a newline
[ "${#targets[@]}" -gt 0 ] || { echo "no fuzz targets listed in $bin/targets.txt" >&2; exit 1; }
for target in "${targets[@]}"; do
  mkdir -p "$scratch/$target"
  cp "$here/inputs/$target"/* "$scratch/$target/"
  echo "== fuzz_$target, ${seconds} s"
  # detect_leaks stays on; -rss_limit_mb bounds a runaway allocation; -timeout flags a hang.
  "$bin/fuzz_$target" "$scratch/$target" -max_total_time="$seconds" -max_len=8192 -timeout=10 -rss_limit_mb=2048 \
      -artifact_prefix="$here/crashes/$target-" -print_final_stats=1 2>&1 | grep -E "^(#[0-9]+ +DONE|stat::number_of_executed_units|stat::peak_rss|==[0-9]+==ERROR|SUMMARY|artifact_prefix|Test unit written)" || true
  if ls "$here/crashes/$target-"* >/dev/null 2>&1; then
    echo "fuzz_$target found a problem: $(ls "$here/crashes/$target-"*)" >&2
    exit 1
  fi
done
echo "fuzz: no crash, hang or leak in ${seconds} s of each target"
