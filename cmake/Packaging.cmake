# SPDX-License-Identifier: Apache-2.0
# `make package`: the Debian packages of what cmake/Install.cmake installs, one per component —
#   spectrum         the workstation (Qt GUI, fonts; MP4 cines through the ffmpeg program, a Recommends)
#   spectrum-cli     the command line (no GUI library)
#   spectrum-blobd   the blob server and its systemd service (no GUI library, no fonts, no FFmpeg)
#   spectrum-common  the filter plugins both load
# Library dependencies are found by dpkg-shlibdeps; what is loaded at run time (Qt's platform plugins, the fonts
# the overlay is drawn with) is declared by hand. `make package-check` installs them into a clean Debian 12, runs
# them from there and runs lintian on them (tests/package/check-deb.sh).
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME spectrum)
set(CPACK_PACKAGE_VENDOR "The Spectrum developers")
set(CPACK_PACKAGE_CONTACT "${SPECTRUM_PACKAGE_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${SPECTRUM_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
if(SPECTRUM_PACKAGE_HOMEPAGE)
  set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "${SPECTRUM_PACKAGE_HOMEPAGE}")
endif()

set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL workstation cli blobd common)
set(same "(= ${PROJECT_VERSION})")

set(CPACK_DEBIAN_WORKSTATION_PACKAGE_NAME spectrum)
set(CPACK_DEBIAN_WORKSTATION_PACKAGE_SECTION science)
set(CPACK_DEBIAN_WORKSTATION_PACKAGE_DEPENDS "spectrum-common ${same}, qt6-qpa-plugins, fonts-dejavu-core")
set(CPACK_DEBIAN_WORKSTATION_PACKAGE_RECOMMENDS "spectrum-cli ${same}, ffmpeg")
set(CPACK_COMPONENT_WORKSTATION_DESCRIPTION
    "diagnostic imaging workstation for DICOM studies\n"
    "Spectrum finds studies in the hospital's archives (DICOMweb, DIMSE, blob\n"
    "servers, S3, folders), shows the first image while the study streams in,\n"
    "keeps a crash-safe local disk cache, filters images while they arrive, and\n"
    "sends derived images and findings back as DICOM.")

set(CPACK_DEBIAN_CLI_PACKAGE_NAME spectrum-cli)
set(CPACK_DEBIAN_CLI_PACKAGE_SECTION science)
set(CPACK_DEBIAN_CLI_PACKAGE_DEPENDS "spectrum-common ${same}")
set(CPACK_DEBIAN_CLI_PACKAGE_RECOMMENDS "dcmtk")
set(CPACK_COMPONENT_CLI_DESCRIPTION
    "command line of the Spectrum imaging workstation\n"
    "spectrum-cli searches, fetches and prefetches studies, keeps the disk cache,\n"
    "renders and filters images, moves blobs to blob servers and S3, and runs the\n"
    "Storage SCP headless. While the workstation runs, it hands it the work.")

set(CPACK_DEBIAN_BLOBD_PACKAGE_NAME spectrum-blobd)
set(CPACK_DEBIAN_BLOBD_PACKAGE_SECTION net)
set(CPACK_DEBIAN_BLOBD_PACKAGE_DEPENDS "adduser")  # without systemd-sysusers; deb-systemd-helper is essential
set(CPACK_DEBIAN_BLOBD_PACKAGE_CONTROL_EXTRA
    ${PROJECT_SOURCE_DIR}/resources/debian/postinst;${PROJECT_SOURCE_DIR}/resources/debian/prerm;${PROJECT_SOURCE_DIR}/resources/debian/postrm)
set(CPACK_COMPONENT_BLOBD_DESCRIPTION
    "blob server of the Spectrum imaging workstation\n"
    "spectrum-blobd serves a folder of blobs (DICOM studies) over Spectrum's blob\n"
    "protocol, many TCP connections per blob, every MiB checked against a hash\n"
    "tree, with a token and optional TLS. A hardened systemd service runs it.")

set(CPACK_DEBIAN_COMMON_PACKAGE_NAME spectrum-common)
set(CPACK_DEBIAN_COMMON_PACKAGE_SECTION science)
set(CPACK_COMPONENT_COMMON_DESCRIPTION
    "filter plugins of the Spectrum imaging workstation\n"
    "The image filters that spectrum and spectrum-cli load at run time from\n"
    "/usr/lib/spectrum/filters.")
include(CPack)
