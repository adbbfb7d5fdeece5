// SPDX-License-Identifier: Apache-2.0
#pragma once
// Memory freed in the process given back to the system: a study closed should leave the workstation's resident
// memory where it was before the study opened. The C library keeps freed heap pages for reuse (glibc grows its mmap
// threshold once large blocks are freed, so decoded slices come from the heap, not their own mappings); after a
// large release — a study closed — they are handed back (glibc's malloc_trim), on the blocking pool: walking the
// heap of a few GiB takes milliseconds the GUI thread does not give. Elsewhere than glibc, nothing is done.
// malloc_trim gives back the free pages inside every arena but not the free space at the top of the arenas the
// pool's threads allocate in: glibc shrinks those only past its trim threshold, which it raises with the mmap
// threshold to twice the largest block freed (a 10 MiB radiograph: 20 MiB an arena, eight arenas). A working day
// measured it (tests/bench/soak.sh, decision 0037): without fixed thresholds, 60–140 MiB stayed resident after each
// study closed; with them, within a few MiB of the window before.

namespace spectrum {

/// Fixes the C library's thresholds once, at start, before the heap grows: blocks up to 32 MiB (a decoded image,
/// its display) from the heap and reused there, as glibc's own adjustment would have them; the free space at the
/// top of any arena given back past 4 MiB. Call from main().
void keepHeapReturnable();

/// Gives the heap's free pages back to the system, off the calling thread, now and again two seconds later (what
/// work still under way for it frees meanwhile). Cheap to call; from a thread with an event loop.
void returnFreedMemory();

} // namespace spectrum
