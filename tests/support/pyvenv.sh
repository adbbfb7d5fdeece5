#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Makes the venv of the test peers (tests/support/test-peers.txt) from PyPI, once: a test calls it before using
# one; concurrent tests wait on a lock, and a venv that is complete is left as it is.
# usage: pyvenv.sh DIR REQUIREMENTS
set -euo pipefail
dir=$1
requirements=$2
mkdir -p "$(dirname "$dir")"
exec 9>"$dir.lock"
flock 9
stamp="$dir/.requirements"
if [ -x "$dir/bin/python" ] && [ -f "$stamp" ] && cmp -s "$stamp" "$requirements"; then
  exit 0
fi
rm -rf "$dir"
/usr/bin/python3 -m venv "$dir"
"$dir/bin/pip" install --quiet --disable-pip-version-check -r "$requirements"
cp "$requirements" "$stamp"
