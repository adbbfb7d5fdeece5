#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Starts the workstation when there is a display; otherwise says how to run it headless.
set -eu
bin=$1; shift || true
if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ] && [ -z "${QT_QPA_PLATFORM:-}" ]; then
  cat <<MSG
No display found (DISPLAY and WAYLAND_DISPLAY are unset), so the workstation window cannot open here.
Run it headless instead:
  QT_QPA_PLATFORM=offscreen $bin --screenshot spectrum.png     # study list rendered to a PNG
  QT_QPA_PLATFORM=offscreen $bin --screenshot ct.png --open demo-ct
or in a virtual display:
  xvfb-run -a $bin
MSG
  exit 0
fi
exec "$bin" "$@"
