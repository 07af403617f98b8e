// MinHash signatures of shingle sets (shingles.h). Each of num_permutations hash functions
// h_i(x) = high 32 bits of (a_i * x + b_i) mod 2^64 — multiply-shift, with a_i odd and a_i, b_i
// drawn from the seed — stands for a random permutation of the shingle hashes; a signature holds
// each function's minimum over the set. Two sets agree in a slot with probability equal to their
// Jaccard similarity, so the fraction of equal slots estimates it (standard deviation
// sqrt(J(1-J)/P): 0.035 at J = 0.8 and 128 permutations). The shingle hashes are already mixed
// 64-bit values, which is what lets a multiply-shift family stand in for min-wise independent
// permutations. Signatures depend only on the set, the seed and the count: never on threads.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace sluice {

class MinHasher {
 public:
  // Precondition: num_permutations >= 1.
  MinHasher(int num_permutations, uint64_t seed);

  int num_permutations() const { return static_cast<int>(multipliers_.size()); }

  // Writes the signature of a set of shingle hashes to signature [num_permutations]; an empty
  // set's is all 0xFFFFFFFF.
  void sign(std::span<const uint64_t> shingle_hashes, std::span<uint32_t> signature) const;

 private:
  std::vector<uint64_t> multipliers_;  // [num_permutations], odd
  std::vector<uint64_t> increments_;   // [num_permutations]
};

// Returns the fraction of equal slots of two signatures of the same length: the estimated
// Jaccard similarity of their sets.
double estimated_jaccard(std::span<const uint32_t> a, std::span<const uint32_t> b);

}  // namespace sluice
