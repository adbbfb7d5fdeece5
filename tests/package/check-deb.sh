#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Checks the Debian packages (make package: spectrum, spectrum-cli, spectrum-blobd, spectrum-common) with lintian,
# installs them into a fresh Debian 12 root with apt, as a hospital's IT would (spectrum-blobd first alone: no GUI
# library, fonts or FFmpeg come with it), checks that nothing installed links a GPL library, and runs Spectrum from
# the installed paths: --version and --help of each executable, the manual pages, the filter
# plugin, the service's user and unit, spectrum-blobd serving spectrum-cli, a headless screenshot of the demo CT,
# the service started by systemd itself (the root booted with systemd-nspawn), and a clean removal. Not part of `make test` (it needs root, Debian's mirror and a few minutes): `make
# package-check` runs it, and .ci/run after the tests.
# Usage: tests/package/check-deb.sh [BUILD_DIR]     (the base root is kept in $SPECTRUM_DEBROOT.base for next time)
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
deb=$(ls -t "$build"/spectrum_*_amd64.deb 2>/dev/null | head -1)
[ -n "$deb" ] || { echo "check-deb: no package in $build (make package)" >&2; exit 1; }
version=$(dpkg-deb -f "$deb" Version)
debs=()
for package in spectrum spectrum-cli spectrum-blobd spectrum-common; do
  f="$build/${package}_${version}_amd64.deb"
  [ -f "$f" ] || { echo "check-deb: no $f (make package makes four)" >&2; exit 1; }
  debs+=("$f")
done
[ "$(id -u)" -eq 0 ] || { echo "check-deb: needs root (debootstrap, chroot)" >&2; exit 1; }
root=${SPECTRUM_DEBROOT:-/var/tmp/spectrum-debroot}
base=$root.base

if [ ! -x "$base/usr/bin/apt-get" ]; then
  command -v debootstrap >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
  echo "check-deb: a minimal Debian 12 in $base (debootstrap, once)"
  rm -rf "$base.tmp"
  debootstrap --variant=minbase bookworm "$base.tmp" http://deb.debian.org/debian >/dev/null
  mv "$base.tmp" "$base"
fi

# Every run starts from the untouched base: nothing of an earlier run or of this machine is in it.
umount -l "$root/proc" 2>/dev/null || true  # an earlier run that was killed
rm -rf "$root"
cp -a "$base" "$root"
cleanup() {
  # runuser passes SIGTERM on to spectrum-blobd; nothing is killed by name (the host may run its own).
  if [ -n "${blobd:-}" ]; then kill "$blobd" 2>/dev/null || true; wait "$blobd" 2>/dev/null || true; fi
  umount -l "$root/proc" 2>/dev/null || true
  rm -rf "$root"
}
trap cleanup EXIT
mount -t proc proc "$root/proc"
cp /etc/resolv.conf "$root/etc/resolv.conf"
for f in "${debs[@]}"; do cp "$f" "$root/tmp/"; done
in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "$@"; }
step() { echo "check-deb: $*"; }

step "lintian finds nothing to say against the four packages"
command -v lintian >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq lintian >/dev/null
# Tags that are Debian's archive rules for packages built from a Debian source package, not for packages built
# by CPack outside one, are named in tests/package/lintian-suppressed with why.
lint=$(lintian --fail-on error,warning --tag-display-limit 0 --suppress-tags-from-file "$(dirname "$0")/lintian-suppressed" "${debs[@]}" 2>&1) \
  || { echo "check-deb: lintian:" >&2; echo "$lint" >&2; exit 1; }
lint=$(grep -v "running with root privileges" <<<"$lint" || true)
[ -z "$lint" ] || echo "$lint" | sed 's/^/  /'

step "spectrum-blobd alone: a server without the Qt GUI, fonts or FFmpeg"
in_root apt-get update -qq
in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "/tmp/$(basename "${debs[2]}")" >/dev/null
if extra=$(in_root dpkg-query -W -f '${Package}\n' | grep -E '^(libqt6gui|libqt6widgets|fonts-|libav|libx264|libx265|ffmpeg)'); then
  echo "check-deb: spectrum-blobd brought $(echo $extra)" >&2; exit 1
fi

step "apt installs the four packages and what they depend on"
in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(for f in "${debs[@]}"; do echo "/tmp/$(basename "$f")"; done) >/dev/null

step "no installed program or plugin links a GPL library (FFmpeg's, x264)"
for package in spectrum spectrum-cli spectrum-blobd spectrum-common; do
  for f in $(in_root dpkg -L "$package"); do
    [ -f "$root$f" ] && [ "$(od -An -tx1 -N4 "$root$f" | tr -d ' ')" = 7f454c46 ] || continue
    if linked=$(in_root ldd "$f" | awk '{print $1}' | grep -E '^(libav|libsw|libpostproc|libx264|libx265)'); then
      echo "check-deb: $f ($package) links $(echo $linked)" >&2; exit 1
    fi
  done
done

step "each executable answers --version and --help from /usr/bin"
for exe in spectrum spectrum-cli spectrum-blobd; do
  version=$(in_root "$exe" --version)
  echo "  $version"
  [[ "$version" == *" $(dpkg-deb -f "$deb" Version)" ]] || { echo "check-deb: $exe --version said '$version'" >&2; exit 1; }
  in_root "$exe" --help | grep -q -i usage || { echo "check-deb: $exe --help printed no usage" >&2; exit 1; }
done

step "manual pages, desktop entry, icon, AppStream data, service and its user are where they belong"
for f in /usr/share/man/man1/spectrum.1.gz /usr/share/man/man1/spectrum-cli.1.gz /usr/share/man/man1/spectrum-blobd.1.gz \
         /usr/share/applications/org.spectrum.Spectrum.desktop /usr/share/icons/hicolor/scalable/apps/org.spectrum.Spectrum.svg \
         /usr/share/metainfo/org.spectrum.Spectrum.metainfo.xml /usr/lib/systemd/system/spectrum-blobd.service \
         /usr/lib/sysusers.d/spectrum-blobd.conf /usr/lib/spectrum/filters/spectrum-gamma.so \
         /usr/share/doc/spectrum/copyright /usr/share/doc/spectrum-cli/copyright /usr/share/doc/spectrum-blobd/copyright \
         /usr/share/doc/spectrum-common/copyright /usr/share/doc/spectrum/changelog.gz /usr/share/doc/spectrum-blobd/changelog.gz; do
  [ -s "$root$f" ] || { echo "check-deb: $f is missing" >&2; exit 1; }
done
in_root getent passwd spectrum-blobd >/dev/null || { echo "check-deb: the postinst made no user spectrum-blobd" >&2; exit 1; }

step "the filter plugin loads from /usr/lib/spectrum/filters; median is despeckle"
in_root spectrum-cli filters | grep -q "^gamma .*/usr/lib/spectrum/filters/spectrum-gamma.so" \
  || { echo "check-deb: the installed plugin was not found" >&2; in_root spectrum-cli filters >&2; exit 1; }
in_root spectrum-cli demo --out /tmp/demo --only demo-cr >/dev/null
cr=$(cd "$root" && find tmp/demo -name '*.dcm' | head -1)
in_root spectrum-cli filter "/$cr" /tmp/median.dcm --filter median | grep -q "despeckle" \
  || { echo "check-deb: filter --filter median failed" >&2; exit 1; }

step "spectrum-blobd serves spectrum-cli as the unit starts it: its own user, its state directory, a token file"
echo "check-deb-token" > "$root/tmp/token"
chmod 600 "$root/tmp/token"  # a secret is its owner's alone, or refused
install -d -m 0700 "$root/run/credentials"                      # what LoadCredential= hands the service:
install -m 0400 "$root/tmp/token" "$root/run/credentials/token"  # a copy its user can read
chroot "$root" chown spectrum-blobd: /run/credentials /run/credentials/token
chroot "$root" install -d -m 0700 -o spectrum-blobd -g spectrum-blobd /var/lib/spectrum-blobd  # StateDirectory=
chroot "$root" /usr/bin/env -i PATH=/usr/bin:/bin /usr/sbin/runuser -u spectrum-blobd -- \
  spectrum-blobd --root /var/lib/spectrum-blobd --token-file /run/credentials/token --port 0 > "$root/tmp/blobd.out" 2>&1 &
blobd=$!
for _ in $(seq 50); do grep -q listening "$root/tmp/blobd.out" && break; sleep 0.1; done
port=$(sed -n 's/.*listening on [^:]*:\([0-9]*\).*/\1/p' "$root/tmp/blobd.out")
[ -n "$port" ] || { echo "check-deb: spectrum-blobd did not start:" >&2; cat "$root/tmp/blobd.out" >&2; exit 1; }
in_root spectrum-cli put "blob://127.0.0.1:$port/cr" "/$cr" --token-file /tmp/token 2>/dev/null
in_root spectrum-cli stat "blob://127.0.0.1:$port/cr" --token-file /tmp/token | grep -q "$(stat -c %s "$root/$cr") bytes" \
  || { echo "check-deb: the blob did not come back" >&2; exit 1; }
[ "$(chroot "$root" stat -c %U /var/lib/spectrum-blobd/index.sqlite)" = spectrum-blobd ] \
  || { echo "check-deb: the blobs are not the service user's" >&2; exit 1; }
kill "$blobd"; wait "$blobd" 2>/dev/null || true; blobd=

step "the workstation renders the demo CT headless from the installed paths"
in_root env HOME=/tmp/home QT_QPA_PLATFORM=offscreen spectrum --screenshot /tmp/shot.png --open demo-ct --slice 60 >/dev/null 2>&1
[ "$(head -c 8 "$root/tmp/shot.png" | od -An -tx1 | tr -d ' ')" = 89504e470d0a1a0a ] \
  || { echo "check-deb: no screenshot" >&2; exit 1; }
cp "$root/tmp/shot.png" "$build/package-check.png"
echo "  $(stat -c %s "$build/package-check.png") bytes: $build/package-check.png"

step "under systemd (systemd-nspawn boots the root): the unit starts as its user, sandboxed, serves, and stops cleanly"
command -v systemd-nspawn >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq systemd-container >/dev/null
in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends systemd systemd-sysv dbus >/dev/null 2>&1
install -d -m 0700 "$root/etc/spectrum-blobd"
install -m 0600 "$root/tmp/token" "$root/etc/spectrum-blobd/token"
cp "$root/usr/share/doc/spectrum-blobd/examples/spectrum-blobd.default" "$root/etc/default/spectrum-blobd"
rm -rf "$root/var/lib/spectrum-blobd"                       # systemd makes it (StateDirectory=)
in_root systemctl enable spectrum-blobd.service >/dev/null 2>&1
cat > "$root/etc/systemd/system/spectrum-check.service" <<'UNIT'
[Unit]
Description=check-deb: spectrum-blobd under systemd, then power off
After=spectrum-blobd.service
Wants=spectrum-blobd.service
[Service]
Type=oneshot
ExecStart=/bin/bash /usr/local/bin/spectrum-check
ExecStartPost=/bin/systemctl --no-block poweroff
UNIT
ln -sf /etc/systemd/system/spectrum-check.service "$root/etc/systemd/system/multi-user.target.wants/spectrum-check.service"
cat > "$root/usr/local/bin/spectrum-check" <<'CHECK'
#!/bin/bash
exec > /root/service-check.log 2>&1
for _ in $(seq 50); do systemctl is-active -q spectrum-blobd && break; sleep 0.2; done
pid=$(systemctl show -p MainPID --value spectrum-blobd)
echo "user=$(stat -c %U /proc/$pid) state=$(stat -c '%U %a' /var/lib/spectrum-blobd)"
grep -E '^(NoNewPrivs|Seccomp|CapEff|CapBnd):' /proc/$pid/status | tr -s '\t ' ' '
head -c 3000000 /dev/urandom > /root/blob.bin
spectrum-cli put blob://127.0.0.1:7411/probe /root/blob.bin --token-file /etc/spectrum-blobd/token 2>/dev/null
spectrum-cli get blob://127.0.0.1:7411/probe /root/back.bin --token-file /etc/spectrum-blobd/token 2>/dev/null
cmp -s /root/blob.bin /root/back.bin && echo "round trip: same bytes"
systemctl stop spectrum-blobd
echo "stop: $(systemctl show -p Result --value spectrum-blobd)"
echo "log=$(stat -c '%U %a' /var/log/spectrum-blobd) $(ls /var/log/spectrum-blobd)"
grep -c ' info spectrum.app: listening on ' /var/log/spectrum-blobd/spectrum-blobd.log | sed 's/^/log lines of listening: /'
CHECK
umount -l "$root/proc" 2>/dev/null || true   # nspawn mounts its own
timeout 300 systemd-nspawn -q --register=no --keep-unit -D "$root" -b > "$build/package-check-nspawn.log" 2>&1 || true
mount -t proc proc "$root/proc"
if [ ! -e "$root/root/service-check.log" ]; then
  # The container never ran its units: a machine that cannot run systemd-nspawn (no namespaces, no privileges).
  # Said loudly, not passed: the lines below are the container's own words.
  echo "check-deb: NOT CHECKED — systemd-nspawn could not boot the root on this machine:" >&2
  tail -5 "$build/package-check-nspawn.log" | sed 's/^/  /' >&2
else
  sed 's/^/  /' "$root/root/service-check.log"
  expect() { grep -q "$1" "$root/root/service-check.log" || { echo "check-deb: under systemd, no '$1'" >&2; exit 1; }; }
  expect "^user=spectrum-blobd state=spectrum-blobd 700$"
  expect "^NoNewPrivs: 1$"
  expect "^Seccomp: 2$"
  expect "^CapEff: 0000000000000000$"
  expect "^round trip: same bytes$"
  expect "^stop: success$"
  expect "^log=spectrum-blobd 700 spectrum-blobd.log$"
  expect "^log lines of listening: 1$"
fi
in_root systemctl disable spectrum-check.service >/dev/null 2>&1 || true

step "removal leaves nothing of the package behind"
in_root env DEBIAN_FRONTEND=noninteractive apt-get remove -y -qq spectrum spectrum-cli spectrum-blobd spectrum-common >/dev/null
for f in /usr/bin/spectrum /usr/bin/spectrum-cli /usr/bin/spectrum-blobd /usr/lib/spectrum /usr/share/applications/org.spectrum.Spectrum.desktop \
         /etc/systemd/system/multi-user.target.wants/spectrum-blobd.service; do
  [ ! -e "$root$f" ] || { echo "check-deb: $f is still there after removal" >&2; exit 1; }
done
step "passed"
