#include "engine/cache/block_pool.h"

#include "engine/core/error.h"

#include <gtest/gtest.h>

#include <vector>

namespace sluice {
namespace {

using Ids = std::vector<int32_t>;

TEST(BlockPool, AllocatesToExhaustionInIdOrder) {
  BlockPool pool(4, true);
  pool.check_invariants();
  EXPECT_EQ(pool.num_free_blocks(), 4);
  EXPECT_EQ(pool.allocate(3), (Ids{0, 1, 2}));
  pool.check_invariants();
  EXPECT_EQ(pool.allocate(1), (Ids{3}));
  pool.check_invariants();
  EXPECT_FALSE(pool.can_allocate(1));
  EXPECT_TRUE(pool.can_allocate(0));
  EXPECT_EQ(pool.num_free_blocks(), 0);
  EXPECT_EQ(pool.num_used_blocks(), 4);
  for (int32_t id = 0; id < 4; ++id) EXPECT_EQ(pool.block(id).ref_count, 1);
}

TEST(BlockPool, RejectsAnEmptyPool) {
  EXPECT_THROW(BlockPool(0, true), Error);
}

TEST(BlockPool, ReusesTheLeastRecentlyFreedBlockFirst) {
  BlockPool pool(4, true);
  pool.allocate(4);
  pool.release(2);
  pool.release(0);
  pool.release(3);
  pool.check_invariants();
  EXPECT_EQ(pool.free_block_ids(), (Ids{2, 0, 3}));
  EXPECT_EQ(pool.allocate(1), (Ids{2}));
  pool.check_invariants();
  pool.release(1);
  EXPECT_EQ(pool.free_block_ids(), (Ids{0, 3, 1}));
  EXPECT_EQ(pool.allocate(3), (Ids{0, 3, 1}));
  pool.check_invariants();
}

TEST(BlockPool, SharedBlockIsFreedByItsLastHolder) {
  BlockPool pool(2, true);
  pool.allocate(1);
  pool.add_ref(0);
  EXPECT_EQ(pool.block(0).ref_count, 2);
  pool.release(0);
  pool.check_invariants();
  EXPECT_EQ(pool.num_free_blocks(), 1);
  pool.release(0);
  pool.check_invariants();
  EXPECT_EQ(pool.num_free_blocks(), 2);
}

TEST(BlockPool, FreedCachedBlockIsRevivedFromTheMiddleOfTheQueue) {
  BlockPool pool(4, true);
  pool.allocate(4);
  const Ids tokens = {5, 6, 7, 8};
  ASSERT_TRUE(pool.cache_block(1, 111, 99, tokens));
  pool.release(0);
  pool.release(1);
  pool.release(2);
  pool.check_invariants();
  EXPECT_EQ(pool.num_cached_free_blocks(), 1);
  EXPECT_EQ(pool.free_block_ids(), (Ids{0, 1, 2}));

  ASSERT_EQ(pool.find_cached_block(111, 99, tokens), std::optional<int32_t>(1));
  pool.add_ref(1);
  pool.check_invariants();
  EXPECT_EQ(pool.block(1).ref_count, 1);
  EXPECT_TRUE(pool.block(1).has_hash);
  EXPECT_EQ(pool.free_block_ids(), (Ids{0, 2}));
  EXPECT_EQ(pool.num_cached_free_blocks(), 0);
  EXPECT_EQ(pool.num_used_blocks(), 2);
}

TEST(BlockPool, AllocationEvictsTheCachedHash) {
  BlockPool pool(2, true);
  pool.allocate(2);
  const Ids tokens = {1, 2};
  ASSERT_TRUE(pool.cache_block(0, 42, 7, tokens));
  pool.release(0);
  pool.release(1);
  EXPECT_EQ(pool.num_cached_free_blocks(), 1);
  EXPECT_EQ(pool.allocate(1), (Ids{0}));
  pool.check_invariants();
  EXPECT_FALSE(pool.block(0).has_hash);
  EXPECT_EQ(pool.num_cached_free_blocks(), 0);
  EXPECT_FALSE(pool.find_cached_block(42, 7, tokens).has_value());
  // The hash is free again for another block.
  EXPECT_TRUE(pool.cache_block(0, 42, 7, tokens));
  pool.check_invariants();
}

// A hash collision is simulated by looking up the registered hash with other content: the hit
// must be refused, never trusted on the hash alone.
TEST(BlockPool, PrefixHitVerifiesTokensAndParentExactly) {
  BlockPool pool(2, true);
  pool.allocate(1);
  const Ids tokens = {10, 20, 30};
  ASSERT_TRUE(pool.cache_block(0, 1234, 55, tokens));
  EXPECT_EQ(pool.find_cached_block(1234, 55, tokens), std::optional<int32_t>(0));
  EXPECT_FALSE(pool.find_cached_block(1234, 55, Ids{10, 20, 31}).has_value());
  EXPECT_FALSE(pool.find_cached_block(1234, 55, Ids{10, 20}).has_value());
  EXPECT_FALSE(pool.find_cached_block(1234, 56, tokens).has_value());
  EXPECT_FALSE(pool.find_cached_block(1235, 55, tokens).has_value());
}

TEST(BlockPool, SecondBlockWithARegisteredHashStaysUnregistered) {
  BlockPool pool(2, true);
  pool.allocate(2);
  const Ids tokens = {1, 2};
  EXPECT_TRUE(pool.cache_block(0, 9, 3, tokens));
  EXPECT_FALSE(pool.cache_block(1, 9, 3, tokens));
  pool.check_invariants();
  EXPECT_FALSE(pool.block(1).has_hash);
  EXPECT_EQ(pool.find_cached_block(9, 3, tokens), std::optional<int32_t>(0));
  // Registering the same block twice under its own hash is harmless.
  EXPECT_TRUE(pool.cache_block(0, 9, 3, tokens));
  pool.check_invariants();
}

TEST(BlockPool, PrefixCachingOffNeverCaches) {
  BlockPool pool(2, false);
  pool.allocate(1);
  const Ids tokens = {1, 2};
  EXPECT_FALSE(pool.cache_block(0, 9, 3, tokens));
  EXPECT_FALSE(pool.find_cached_block(9, 3, tokens).has_value());
  pool.release(0);
  pool.check_invariants();
  EXPECT_EQ(pool.num_cached_free_blocks(), 0);
}

}  // namespace
}  // namespace sluice
