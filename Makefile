# SPDX-License-Identifier: Apache-2.0
# Thin wrapper: the install script brings the Debian packages, CMake does the build, CTest runs the tests.
BUILD_DIR ?= build
CMAKE_FLAGS ?=
JOBS ?= $(shell nproc)

.PHONY: run test build deps configure clean sanitize fuzz install package package-check

run: build
	@scripts/run-workstation.sh $(BUILD_DIR)/bin/spectrum

test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) --timeout 600

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

configure: deps
	cmake -S . -B $(BUILD_DIR) -G Ninja $(CMAKE_FLAGS)

deps:
	@scripts/install-deps.sh

# ASan + UBSan build in its own folder: the tests, without the benchmarks' programs.
sanitize:
	$(MAKE) test BUILD_DIR=build-asan CMAKE_FLAGS="-DSPECTRUM_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug -DSPECTRUM_BUILD_BENCHMARKS=OFF"

# libFuzzer: a Clang build of the fuzz targets (tests/fuzz), each run FUZZ_SECONDS on its kept inputs.
FUZZ_SECONDS ?= 60
fuzz: deps
	CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DSPECTRUM_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo
	cmake --build build-fuzz -j $(JOBS) --target fuzz_targets
	tests/fuzz/run.sh build-fuzz/fuzz $(FUZZ_SECONDS)

# Installs into PREFIX (default /usr/local): the executables, filter plugins, desktop entry, icon, AppStream data,
# manual pages and spectrum-blobd's systemd unit (docs/INSTALL.md).
PREFIX ?= /usr/local
install: build
	cmake --install $(BUILD_DIR) --prefix $(PREFIX)

# The Debian packages (CPack) in $(BUILD_DIR): spectrum, spectrum-cli, spectrum-blobd, spectrum-common _VERSION_amd64.deb.
package: build
	cd $(BUILD_DIR) && cpack -G DEB

# lintian on the packages, then installs them into a fresh Debian 12 root (debootstrap, chroot) and runs them there.
package-check: package
	tests/package/check-deb.sh $(BUILD_DIR)

clean:
	rm -rf $(BUILD_DIR) build-asan build-fuzz
