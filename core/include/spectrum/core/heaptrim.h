// SPDX-License-Identifier: Apache-2.0
#pragma once
// Memory freed in the process given back to the system: a study closed should leave the workstation's resident
// memory where it was before the study opened. The C library keeps freed heap pages for reuse (glibc grows its mmap
// threshold once large blocks are freed, so decoded slices come from the heap, not their own mappings); after a
// large release — a study closed — they are handed back (glibc's malloc_trim), on the blocking pool: walking the
// heap of a few GiB takes milliseconds the GUI thread does not give. Elsewhere than glibc, nothing is done.

namespace spectrum {

/// Gives the heap's free pages back to the system, off the calling thread, now and again two seconds later (what
/// work still under way for it frees meanwhile). Cheap to call; from a thread with an event loop.
void returnFreedMemory();

} // namespace spectrum
