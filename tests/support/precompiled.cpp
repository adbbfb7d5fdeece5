// SPDX-License-Identifier: Apache-2.0
// The translation unit that makes the test suites' shared precompiled headers (tests/CMakeLists.txt).
