#include "engine/cache/block_hash.h"

#include <gtest/gtest.h>

#include <bit>
#include <random>
#include <unordered_set>
#include <vector>

namespace sluice {
namespace {

TEST(BlockHash, EqualInputsGiveEqualHashes) {
  const std::vector<int32_t> tokens = {1, 2, 3, 4};
  const std::vector<int32_t> same = tokens;
  EXPECT_EQ(hash_block(kRootBlockHash, tokens), hash_block(kRootBlockHash, same));
}

TEST(BlockHash, DependsOnParentOrderAndLength) {
  const std::vector<int32_t> tokens = {1, 2, 3, 4};
  const uint64_t base = hash_block(kRootBlockHash, tokens);
  EXPECT_NE(base, hash_block(base, tokens));
  EXPECT_NE(base, hash_block(kRootBlockHash, std::vector<int32_t>{2, 1, 3, 4}));
  EXPECT_NE(base, hash_block(kRootBlockHash, std::vector<int32_t>{1, 2, 3, 4, 0}));
  EXPECT_NE(base, hash_block(kRootBlockHash, std::vector<int32_t>{1, 2, 3}));
  EXPECT_NE(hash_block(kRootBlockHash, std::vector<int32_t>{}),
            hash_block(kRootBlockHash, std::vector<int32_t>{0}));
}

// Every block that differs from a base block in one token by one value must hash apart: the
// closest inputs are the likeliest to collide under weak mixing.
TEST(BlockHash, NeighbouringBlocksDoNotCollide) {
  std::vector<int32_t> tokens(16, 7);
  std::unordered_set<uint64_t> hashes;
  hashes.insert(hash_block(kRootBlockHash, tokens));
  int num_blocks = 1;
  for (size_t position = 0; position < tokens.size(); ++position) {
    for (int32_t value = 0; value < 4096; ++value) {
      if (value == 7) continue;
      tokens[position] = value;
      hashes.insert(hash_block(kRootBlockHash, tokens));
      ++num_blocks;
    }
    tokens[position] = 7;
  }
  EXPECT_EQ(static_cast<int>(hashes.size()), num_blocks);
}

// Flipping one input bit flips about half of the 64 output bits on average (avalanche).
TEST(BlockHash, OneBitChangeFlipsAboutHalfTheBits) {
  std::mt19937 rng(1234);
  std::uniform_int_distribution<int32_t> token(0, 50000);
  double total_flipped = 0;
  int num_trials = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    std::vector<int32_t> tokens(16);
    for (int32_t& t : tokens) t = token(rng);
    const uint64_t parent = rng();
    const uint64_t before = hash_block(parent, tokens);
    tokens[trial % 16] ^= 1 << (trial % 16);
    total_flipped += std::popcount(before ^ hash_block(parent, tokens));
    ++num_trials;
  }
  const double mean = total_flipped / num_trials;
  EXPECT_GT(mean, 30.0);
  EXPECT_LT(mean, 34.0);
}

}  // namespace
}  // namespace sluice
