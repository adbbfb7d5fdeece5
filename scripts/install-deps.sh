#!/usr/bin/env bash
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
  # PNG for spectrum-cli render (imaging itself needs no GUI library)
  libpng-dev
  # FFmpeg's libraries: cines exported as MP4 (H.264); ffprobe checks them in the tests
  libavcodec-dev libavformat-dev libswscale-dev libavutil-dev ffmpeg
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
  # nginx: an HTTPS reverse proxy with Bearer tokens in front of Orthanc, for the DICOMweb TLS and token tests
  nginx-light
  # installing: manual pages from --help (help2man), and the tools that check what is installed (the desktop
  # entry, AppStream data, manual pages, systemd unit); debootstrap for make package-check's clean Debian root
  help2man desktop-file-utils appstream groff-base systemd debootstrap systemd-container
  # libFuzzer (Clang and its runtime libraries) for `make fuzz`, which CI runs after the test suites
  clang libclang-rt-14-dev
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
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
