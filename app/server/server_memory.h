// How the server gives memory back. glibc's malloc gives each thread that contends for it an
// arena of its own (up to 8 per core) and keeps what is freed there for reuse; and once a large
// block is freed it raises its thresholds (up to 32 MiB for mmap, 64 MiB for trimming) so that
// later large blocks stay in the arenas too, whose tops malloc_trim never shrinks. With hundreds
// of HTTP threads every large answer left its peak behind for good (issue 27: four 87 MB
// responses left 5.8 GB resident, idle). The server caps the arenas, fixes the thresholds, and
// trims after a request that held much memory.
#pragma once

namespace sluice {

// The arenas a server process keeps: a few, shared by its HTTP threads.
inline constexpr int kMaxServerMallocArenas = 4;

// For the whole process (a no-op off glibc): at most max_arenas malloc arenas, shared by the
// threads (glibc fixes the count when the first thread asks for an arena of its own: call this
// before threads start, or the count stays glibc's); blocks of 1 MiB or more mapped on their own
// (given back when freed); an arena's top trimmed on free once 1 MiB of it is unused.
void tune_malloc_for_serving(int max_arenas);

// Returns the free memory of every arena to the system (malloc_trim), so that a large answer
// leaves no lasting footprint. Takes a few milliseconds on a large heap: call it after large
// requests, not after every one.
void release_free_memory();

}  // namespace sluice
