# SPDX-License-Identifier: Apache-2.0
# `make package`: a Debian package of what cmake/Install.cmake installs, with its library dependencies found by
# dpkg-shlibdeps and the run-time plugins it loads (Qt's platform plugins) declared by hand. Installed on a clean
# Debian 12 and run from there by tests/package/check-deb.sh.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME spectrum)
set(CPACK_PACKAGE_VENDOR "The Spectrum developers")
set(CPACK_PACKAGE_CONTACT "The Spectrum developers <spectrum@spectrum.invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "diagnostic imaging workstation that streams, filters and reads DICOM studies")
string(CONCAT CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "Spectrum finds studies in the hospital's archives (DICOMweb, DIMSE, blob servers, folders), shows\n"
    "the first image while the study streams in, keeps a crash-safe local disk cache, filters images while\n"
    "they arrive and sends derived images back as DICOM. Includes spectrum-cli and the blob server\n"
    "spectrum-blobd with its systemd service.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://spectrum.invalid/")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# Loaded at run time, so invisible to dpkg-shlibdeps: the xcb and offscreen platform plugins, and the fonts the
# overlay is drawn with.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "qt6-qpa-plugins, fonts-dejavu-core, adduser")  # adduser: the postinst's fallback
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "dcmtk, ffmpeg")  # ffmpeg: MP4 cines are made by the program (run, not linked)
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${PROJECT_SOURCE_DIR}/resources/debian/postinst;${PROJECT_SOURCE_DIR}/resources/debian/prerm;${PROJECT_SOURCE_DIR}/resources/debian/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)
