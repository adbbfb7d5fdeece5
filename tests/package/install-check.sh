#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# CTest tst_install: `cmake --install` into an empty prefix, then what a desktop and a Debian system will read of
# it, checked by their own tools: the desktop entry (desktop-file-validate), the AppStream data (appstreamcli),
# the manual pages (groff, warnings as errors), the service unit (systemd-analyze verify); and the installed
# executables run from the prefix, finding their filter plugin there; and what they link allowed by the licences.
# Usage: install-check.sh BUILD_DIR
set -euo pipefail
build=$1
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
fail() { echo "install-check: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$prefix" >/dev/null

for f in bin/spectrum bin/spectrum-cli bin/spectrum-blobd lib/spectrum/filters/spectrum-gamma.so \
         share/applications/org.spectrum.Spectrum.desktop share/icons/hicolor/scalable/apps/org.spectrum.Spectrum.svg \
         share/metainfo/org.spectrum.Spectrum.metainfo.xml share/man/man1/spectrum.1.gz share/man/man1/spectrum-cli.1.gz \
         share/man/man1/spectrum-blobd.1.gz lib/systemd/system/spectrum-blobd.service lib/sysusers.d/spectrum-blobd.conf \
         share/doc/spectrum/copyright share/doc/spectrum-cli/copyright share/doc/spectrum-blobd/copyright \
         share/doc/spectrum-common/copyright share/doc/spectrum/changelog.gz share/doc/spectrum-blobd/examples/spectrum-blobd.default \
         share/doc/spectrum/resources/screenshots/demo-ct.png share/doc/spectrum/docs/READING.md share/doc/spectrum-cli/COMMANDLINE.md; do
  [ -s "$prefix/$f" ] || fail "$f was not installed"
done

# The installed manuals' links and pictures lead to installed files (a manual moved in the tree without its install
# line, or a link to a developer's document, is found here).
for manual in share/doc/spectrum/README.md share/doc/spectrum/docs/READING.md share/doc/spectrum/docs/COMMANDLINE.md; do
  dir=$(dirname "$prefix/$manual")
  for target in $(grep -o '](\([^)#: ]*\)[)#]' "$prefix/$manual" | sed 's/^](//; s/[)#]$//' | grep -v '^$' | sort -u); do
    [ -e "$dir/$target" ] || fail "$manual links $target, which is not installed"
  done
done

desktop-file-validate "$prefix/share/applications/org.spectrum.Spectrum.desktop" || fail "the desktop entry is not valid"
appstreamcli validate --no-net "$prefix/share/metainfo/org.spectrum.Spectrum.metainfo.xml" >/dev/null \
  || fail "the AppStream data is not valid: $(appstreamcli validate --no-net "$prefix/share/metainfo/org.spectrum.Spectrum.metainfo.xml")"
grep -q '^Exec=spectrum$' "$prefix/share/applications/org.spectrum.Spectrum.desktop" || fail "the desktop entry does not start spectrum"

for page in "$prefix"/share/man/man1/*.1.gz; do
  warnings=$(zcat "$page" | groff -man -ww -z 2>&1) || fail "$page: groff failed"
  [ -z "$warnings" ] || fail "$page: $warnings"
  name=$(basename "$page" .1.gz)
  zcat "$page" | grep -q "^\.SH DESCRIPTION" || fail "$page has no description"
  zcat "$page" | grep -q -e '\\-\\-version' || fail "$page does not come from $name --help"
done
zcat "$prefix/share/man/man1/spectrum-cli.1.gz" | grep -q "" || fail "spectrum-cli's page cannot be read"
grep -q "^filter " <(zcat "$prefix/share/man/man1/spectrum-cli.1.gz" | groff -man -Tutf8 2>/dev/null | sed 's/^ *//') \
  || fail "spectrum-cli's page does not list its commands"

# The unit as installed: it names the program in this prefix (systemd-analyze checks that it exists).
# Only what it says of this unit counts: it also loads the targets the unit names, and may speak of other units of
# the machine it runs on.
mkdir "$prefix/verify"
unit=$prefix/verify/spectrum-blobd.service
grep -q "^ExecStart=$prefix/bin/spectrum-blobd " "$prefix/lib/systemd/system/spectrum-blobd.service" \
  || fail "the unit does not start $prefix/bin/spectrum-blobd"
cp "$prefix/lib/systemd/system/spectrum-blobd.service" "$unit"
out=$(systemd-analyze verify --man=no "$unit" 2>&1) || fail "systemd-analyze verify: $out"
ours=$(grep -F "spectrum-blobd" <<<"$out" || true)
[ -z "$ours" ] || fail "systemd-analyze verify: $ours"

for exe in spectrum spectrum-cli spectrum-blobd; do
  v=$(env -u DISPLAY -u WAYLAND_DISPLAY -u QT_QPA_PLATFORM XDG_RUNTIME_DIR="$prefix" "$prefix/bin/$exe" --version)
  [[ "$v" =~ [0-9]+\.[0-9]+\.[0-9]+$ ]] || fail "$exe --version said '$v'"
done
listing=$("$prefix/bin/spectrum-cli" filters 2>&1) || fail "spectrum-cli filters failed: $listing"
grep -q "^gamma .*$prefix/lib/spectrum/filters/spectrum-gamma.so" <<<"$listing" \
  || fail "the installed spectrum-cli did not find its plugin in $prefix/lib/spectrum/filters: $listing"
# Licences: an Apache-2.0 program links no GPL library — none of FFmpeg's (Debian builds them GPL; cines run the
# ffmpeg program) nor x264/x265, directly or through another library; every library an installed file NEEDs is
# named, with its licence, in the copyright file; every source file says its licence (SPDX).
gpl='^(libavcodec|libavformat|libavutil|libavfilter|libavdevice|libswscale|libswresample|libpostproc|libx264|libx265)\.so'
while IFS= read -r elf; do
  if linked=$(ldd "$elf" 2>/dev/null | awk '{print $1}' | grep -E "$gpl"); then
    fail "$elf links $(tr '\n' ' ' <<<"$linked")(GPL: not for an Apache-2.0 program)"
  fi
  for needed in $(readelf -d "$elf" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
    name=${needed%%.so*}
    [ "$name" = ld-linux-x86-64 ] || [ "$name" = ld-linux-aarch64 ] && continue  # the loader, part of libc
    grep -q -w -- "$name" "$prefix/share/doc/spectrum/copyright" \
      || fail "$elf NEEDs $needed, which the copyright file does not name with its licence"
  done
done < <(find "$prefix" -type f \( -perm -u+x -o -name '*.so' \) -exec sh -c 'head -c 4 "$1" | grep -q ELF' _ {} \; -print)
source=$(cd "$(dirname "$0")/../.." && pwd)
grep -q "Apache License" "$source/LICENSE" && grep -q "Version 2.0, January 2004" "$source/LICENSE" || fail "LICENSE is not the Apache License 2.0"
if [ -d "$source/.git" ] && command -v git >/dev/null; then
  unlabelled=$(cd "$source" && git ls-files -- '*.cpp' '*.h' '*.py' '*.sh' '*CMakeLists.txt' '*.cmake' | while read -r f; do
                 head -3 "$f" | grep -q 'SPDX-License-Identifier: Apache-2.0' || echo "$f"; done)
  [ -z "$unlabelled" ] || fail "source files without an SPDX licence line: $(tr '\n' ' ' <<<"$unlabelled")"
fi
echo "install-check: $prefix: everything in place and valid"
