#include "engine/curate/minhash.h"

#include <algorithm>
#include <cassert>

#include "engine/curate/text_normalize.h"

namespace sluice {

MinHasher::MinHasher(int num_permutations, uint64_t seed) {
  assert(num_permutations >= 1 && "a signature has at least one slot");
  const auto count = static_cast<size_t>(num_permutations);
  multipliers_.resize(count);
  increments_.resize(count);
  // splitmix64's sequence from the seed: the same functions on every platform.
  uint64_t state = seed;
  const auto next = [&state] {
    state += 0x9E3779B97F4A7C15ULL;
    return mix64(state);
  };
  for (size_t i = 0; i < count; ++i) {
    multipliers_[i] = next() | 1u;
    increments_[i] = next();
  }
}

void MinHasher::sign(std::span<const uint64_t> shingle_hashes,
                     std::span<uint32_t> signature) const {
  assert(signature.size() == multipliers_.size() && "one slot per permutation");
  std::fill(signature.begin(), signature.end(), 0xFFFFFFFFu);
  const size_t count = multipliers_.size();
  const uint64_t* a = multipliers_.data();
  const uint64_t* b = increments_.data();
  uint32_t* slots = signature.data();
  for (const uint64_t x : shingle_hashes) {
    for (size_t i = 0; i < count; ++i) {
      const auto value = static_cast<uint32_t>((a[i] * x + b[i]) >> 32);
      slots[i] = std::min(slots[i], value);
    }
  }
}

double estimated_jaccard(std::span<const uint32_t> a, std::span<const uint32_t> b) {
  assert(a.size() == b.size() && "signatures of the same permutations");
  if (a.empty()) return 0.0;
  size_t equal = 0;
  for (size_t i = 0; i < a.size(); ++i) equal += a[i] == b[i] ? 1 : 0;
  return static_cast<double>(equal) / static_cast<double>(a.size());
}

}  // namespace sluice
