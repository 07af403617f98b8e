// The id that names a request across the scheduler, the KV cache manager and the runner. The
// engine chooses it (for example the input row index combined with the sample index); the cache
// keys block tables by it, so it lives here rather than in request.h.
#pragma once

#include <cstdint>

namespace sluice {

using RequestId = uint64_t;

}  // namespace sluice
