# Thin wrapper: the install script brings the Debian packages, CMake does the build, CTest runs the tests.
BUILD_DIR ?= build
CMAKE_FLAGS ?=
JOBS ?= $(shell nproc)

.PHONY: run test build deps configure clean sanitize

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

# ASan + UBSan build in its own folder.
sanitize:
	$(MAKE) test BUILD_DIR=build-asan CMAKE_FLAGS="-DSPECTRUM_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug"

clean:
	rm -rf $(BUILD_DIR) build-asan
