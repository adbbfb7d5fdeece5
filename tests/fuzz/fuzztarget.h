// SPDX-License-Identifier: Apache-2.0
#pragma once
// One fuzz target = one function from bytes to nothing that must never crash, hang, leak or touch memory it
// does not own, whatever the bytes. Built two ways from the same source:
//  - SPECTRUM_FUZZ (Clang): LLVMFuzzerTestOneInput of a libFuzzer executable (fuzz_NAME), instrumented, under
//    ASan and UBSan: `make fuzz` runs each for a while;
//  - otherwise: spectrum::fuzz::NAME, which tst_fuzzinputs calls on every kept input (the seeds, and every input
//    that once crashed it) in the normal and the sanitizer test runs.

#include <cstddef>
#include <cstdint>

#ifdef SPECTRUM_FUZZ
#define SPECTRUM_FUZZ_TARGET(name) extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
#else
#define SPECTRUM_FUZZ_TARGET(name)                                 \
    namespace spectrum::fuzz {                                     \
    int name(const uint8_t *data, size_t size);                    \
    }                                                              \
    int spectrum::fuzz::name(const uint8_t *data, size_t size)
#endif

namespace spectrum::fuzz {
/// Chunk sizes drawn from the input itself, so that a fuzzer also explores how bytes are split on arrival.
class Splitter
{
public:
    Splitter(const uint8_t *data, size_t size) : m_seed(size ? data[0] : 0) {}
    /// The next chunk's length, 1 … 64 (or everything left when the input's first byte is even).
    size_t next(size_t left)
    {
        if (m_seed % 2 == 0)
            return left;
        m_state = m_state * 1103515245u + 12345u + m_seed;
        const size_t n = 1 + (m_state >> 16) % 64;
        return n < left ? n : left;
    }

private:
    uint32_t m_seed;
    uint32_t m_state = 1;
};
} // namespace spectrum::fuzz
