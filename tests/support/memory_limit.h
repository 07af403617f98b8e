// Runs code under a cap on how much more memory it may map, to show that hostile sizes are
// refused before anything is sized by them: an allocation of gigabytes fails at once (as
// std::bad_alloc, or a sanitizer's out-of-memory abort) instead of taking the machine's memory.
// The cap is RLIMIT_DATA set to the data segment's current size plus an allowance, which works
// under AddressSanitizer too (RLIMIT_AS does not: its shadow reserves terabytes of addresses).
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace sluice::test {

struct LimitedRun {
  bool threw_error = false;  // attempt threw sluice::Error
  std::string outcome;       // the Error's message, or how the attempt ended otherwise
};

// Runs attempt in a forked child whose memory may grow by at most max_extra_bytes and reports
// how it ended. Nothing the attempt changes reaches this process.
LimitedRun run_with_memory_limit(const std::function<void()>& attempt, size_t max_extra_bytes);

// Expects attempt, run as above, to throw sluice::Error whose message contains every fragment.
// The default allowance is far below what a hostile size would take (gigabytes) and far above
// what checking a small file needs.
void expect_error_within_memory_limit(const std::function<void()>& attempt,
                                      const std::vector<std::string>& fragments,
                                      size_t max_extra_bytes = size_t{64} << 20);

}  // namespace sluice::test
