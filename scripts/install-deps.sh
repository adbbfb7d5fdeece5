#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the Debian packages Spectrum needs to build, run and test — only those that are missing.
# Uses sudo when not root. Safe to run again: it does nothing when everything is present.
set -euo pipefail

packages=(
  # build
  build-essential cmake ninja-build pkg-config
  # Qt 6 (Widgets, Network, Concurrent, Test live in qt6-base-dev) and its platform plugins (xcb, offscreen)
  qt6-base-dev qt6-qpa-plugins fonts-dejavu-core
  # DICOM: DCMTK libraries and its command-line tools (dcmdump, dcm2pnm, dcmcjpeg… used by the tests)
  libdcmtk-dev dcmtk
  # JPEG 2000; fast checksums (XXH3) for the blob protocol; SHA-256 and TLS through OpenSSL
  libopenjp2-7-dev libxxhash-dev libssl-dev
  # the disk cache's index
  libsqlite3-dev
  # the desktop's keyring (Secret Service) where sign-ins keep their tokens; the tests start a session bus with GNOME
  # Keyring and look into it with secret-tool
  libsecret-1-dev dbus-daemon gnome-keyring libsecret-tools
  # PNG for spectrum-cli render (imaging itself needs no GUI library)
  libpng-dev
  # the ffmpeg program: cines exported as MP4 (H.264), run not linked (Debian's FFmpeg is GPL); ffprobe checks them
  ffmpeg
  # opj_compress: JPEG 2000 test files made by an encoder that is not ours
  libopenjp2-tools
  # pydicom (Debian's, for /usr/bin/python3): test files written by a toolkit that is not ours
  python3-pydicom python3-numpy
  # VTK's Python modules: the reference reformatting (vtkImageReslice) that MPR planes are checked and benchmarked against
  python3-vtk9
  # venv: the test peers from PyPI (highdicom…) go into a venv the tests make (tests/support/pyvenv.sh)
  python3-venv
  # test peers: a real PACS and an HTTP client to talk to it; xvfb for running the GUI without a display
  orthanc orthanc-dicomweb curl openssl xvfb xauth
  # another PACS no one here wrote: PixelMed's DICOM storage and Q/R server (Java; tests/stores/tst_otherpacs)
  pixelmed-apps
  # an Orthanc cluster as hospitals scale it (tests/stores/tst_orthanccluster): two Orthancs over one PostgreSQL
  # index, their files in the S3 test server through a Python storage plugin
  postgresql orthanc-postgresql orthanc-python python3-boto3
  # nginx: an HTTPS reverse proxy with Bearer tokens in front of Orthanc, for the DICOMweb TLS and token tests
  nginx-light
  # installing: manual pages from --help (help2man), and the tools that check what is installed (the desktop
  # entry, AppStream data, manual pages, systemd unit); debootstrap for make package-check's clean Debian root
  help2man desktop-file-utils appstream groff-base systemd debootstrap systemd-container
  # the audit record repository of the tests (rsyslog with its TLS driver) and the checker of the audit messages
  # schema (xmllint, libxml2's)
  rsyslog rsyslog-gnutls libxml2-utils
  # libFuzzer (Clang and its runtime libraries) for `make fuzz`, which CI runs after the test suites
  clang libclang-rt-14-dev
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

# The S3 server the tests talk to (versitygw: range GETs, multipart, conditional requests, real signature checks),
# built once from the Go module proxy and kept outside the build folder, so a fresh clone finds it again. Not a
# Debian package; needs Go >= 1.25 (Debian 12 has 1.19: the Go from go.dev). Without Go the S3 tests fail and say so; everything else still works.
versitygw_version=v1.8.0
# The Go toolchain's path (Debian's is too old: the one from go.dev, in /usr/local/go), or a failure.
go_toolchain() {
  if command -v go >/dev/null 2>&1; then command -v go; return 0; fi
  if [ -x /usr/local/go/bin/go ]; then echo /usr/local/go/bin/go; return 0; fi
  return 1
}
peers_dir=${SPECTRUM_PEERS_DIR:-$HOME/.cache/spectrum/peers}
install_s3_server() {
  local bin="$peers_dir/versitygw-$versitygw_version/versitygw"
  if [ -x "$bin" ]; then
    return 0
  fi
  local go
  go=$(go_toolchain) || { echo "install-deps: no Go toolchain: the S3 test server (versitygw) is not built and the S3 tests will fail" >&2; return 0; }
  echo "install-deps: building the S3 test server versitygw $versitygw_version (once, a few minutes)"
  mkdir -p "$peers_dir/versitygw-$versitygw_version"
  local work status=0
  work=$(go_work)
  GOBIN="$peers_dir/versitygw-$versitygw_version" GOMODCACHE="$work/mod" GOCACHE="$work/cache" GOFLAGS=-mod=mod \
    "$go" install "github.com/versity/versitygw/cmd/versitygw@$versitygw_version" || status=$?
  drop_go_work "$go" "$work"
  return $status
}

# A peer's Go modules and build cache go into a folder of their own beside the peers (not /tmp, which may be memory),
# removed once it is built, built or not: they are gigabytes (SeaweedFS's modules alone 3.4 GB) that nothing needs
# afterwards, on machines whose disk the builds fill.
go_work() {
  mkdir -p "$peers_dir"
  mktemp -d -p "$peers_dir" .build-XXXXXX
}
drop_go_work() {
  GOMODCACHE="$2/mod" "$1" clean -modcache >/dev/null 2>&1 || true
  chmod -R u+w "$2" 2>/dev/null || true
  rm -rf "$2"
}

# The identity provider the sign-in tests start (Ory Hydra: OpenID Connect with PKCE, refresh, revocation,
# introspection), built once from its module's source — its go.mod replaces modules, which only a build inside it
# honours — with SQLite for its in-memory database. Needs Go and a C compiler; without them the sign-in test fails
# and says so.
hydra_version=v2.3.0
install_identity_provider() {
  local bin="$peers_dir/hydra-$hydra_version/hydra"
  if [ -x "$bin" ]; then
    return 0
  fi
  local go
  go=$(go_toolchain) || { echo "install-deps: no Go toolchain: the identity provider (Ory Hydra) is not built and the sign-in test will fail" >&2; return 0; }
  echo "install-deps: building the identity provider Ory Hydra $hydra_version (once, a few minutes)"
  local work src status=0
  work=$(go_work)
  export GOMODCACHE="$work/mod" GOCACHE="$work/cache"
  src=$(cd "$work" && GOFLAGS=-mod=mod "$go" mod download -json "github.com/ory/hydra/v2@$hydra_version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p') || status=$?
  # Its client library is a nested module the release leaves out: the published one of the same version is used.
  [ "$status" -eq 0 ] && [ -n "$src" ] && cp -r "$src" "$work/hydra" && chmod -R u+w "$work/hydra" \
    && (cd "$work/hydra" && "$go" mod edit -dropreplace github.com/ory/hydra-client-go/v2 \
        && mkdir -p "$peers_dir/hydra-$hydra_version" \
        && CGO_ENABLED=1 GOFLAGS=-mod=mod "$go" build -tags sqlite,sqlite_omit_load_extension -o "$bin.part" . \
        && mv "$bin.part" "$bin") || status=1
  unset GOMODCACHE GOCACHE
  drop_go_work "$go" "$work"
  return $status
}

# The S3 store whose security token service the S3 sign-in test uses (SeaweedFS, Apache-2.0: AssumeRoleWithWebIdentity
# checked against the identity provider's published keys, then roles with trust policies and S3 policies), built once
# from its module's source (its go.mod replaces modules, which only a build inside it honours). Not a Debian package;
# without Go the test fails and says so.
seaweedfs_version=v0.0.0-20261109003541-7506e5f91cd6
install_sts_store() {
  local bin="$peers_dir/seaweedfs-$seaweedfs_version/weed"
  if [ -x "$bin" ]; then
    return 0
  fi
  local go
  go=$(go_toolchain) || { echo "install-deps: no Go toolchain: the S3 store with a token service (SeaweedFS) is not built and the S3 sign-in test will fail" >&2; return 0; }
  echo "install-deps: building the S3 store SeaweedFS $seaweedfs_version (once, ten minutes or more)"
  local work src
  work=$(go_work)
  export GOMODCACHE="$work/mod" GOCACHE="$work/cache"
  src=$(cd "$work" && GOFLAGS=-mod=mod "$go" mod download -json "github.com/seaweedfs/seaweedfs@$seaweedfs_version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p') || true
  [ -n "$src" ] && cp -r "$src" "$work/seaweedfs" && chmod -R u+w "$work/seaweedfs"
  (cd "$work/seaweedfs" && mkdir -p "$peers_dir/seaweedfs-$seaweedfs_version" \
     && CGO_ENABLED=0 GOFLAGS=-mod=mod "$go" build -ldflags='-s -w' -o "$bin.part" ./weed \
     && mv "$bin.part" "$bin") \
    || echo "install-deps: SeaweedFS did not build: the S3 sign-in test will fail (everything else works)" >&2
  unset GOMODCACHE GOCACHE
  drop_go_work "$go" "$work"
}

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  install_s3_server
  install_identity_provider
  install_sts_store
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "install-deps: missing packages (${missing[*]}) and neither root nor sudo available" >&2
    exit 1
  fi
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# policy-rc.d keeps the orthanc package from starting a system-wide server on port 8042/4242:
# the tests start their own Orthanc on free ports.
if [ ! -e /usr/sbin/policy-rc.d ] && [ -z "$SUDO" ]; then
  printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d
  trap 'rm -f /usr/sbin/policy-rc.d' EXIT
fi
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
install_s3_server
install_identity_provider
install_sts_store
