// What the operating system says about host memory, for refusing work that cannot fit before it
// is attempted (Linux overcommits: a too-large allocation "succeeds" and the process is killed
// later, without a message).
#pragma once

#include <cstddef>

namespace sluice {

// Returns MemAvailable from /proc/meminfo in bytes, or 0 when it cannot be read.
size_t available_system_memory_bytes();

}  // namespace sluice
