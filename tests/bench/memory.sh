#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Memory benchmark (not part of `make test`): a 16-bit image streamed from a file through a filter chain; its peak
# resident memory against the image's size (goal ≤ 3×). Writes tests/bench/last-memory-run.txt.
# Usage: tests/bench/memory.sh [spectrum-memorybench options, e.g. --size 8192]
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
cmake --build "$repo/build" -j 2 --target spectrum-memorybench >/dev/null
{
  echo "tests/bench/memory.sh $*   ($(date +%F), $(nproc) cores)"
  "$repo/build/bin/spectrum-memorybench" "$@"
} | tee "$repo/tests/bench/last-memory-run.txt"
