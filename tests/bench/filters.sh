#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Filter benchmark (not part of `make test`): every Spectrum filter on 16-bit images of 512², 2048² and 4096²,
# OpenCV's closest operations (spectrum-opencv-peer) and ImageMagick's on the same images, side by side, with
# ratios. OpenCV and ImageMagick are benchmark peers only: installed here, never needed by the product.
# Usage: tests/bench/filters.sh [spectrum-filterbench options, e.g. --sizes 2048 --repeats 9]
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
missing=()
pkg-config --exists opencv4 || missing+=(libopencv-dev)
[ -x /usr/bin/convert-im6.q16 ] || missing+=(imagemagick)
if [ ${#missing[@]} -gt 0 ]; then
  $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
cmake -S "$repo" -B "$repo/build" >/dev/null   # finds OpenCV now: builds the peer
cmake --build "$repo/build" -j 2 --target spectrum-filterbench spectrum-opencv-peer >/dev/null
echo "tests/bench/filters.sh $*   ($(date +%F), $(nproc) cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs))"
exec "$repo/build/bin/spectrum-filterbench" "$@"
