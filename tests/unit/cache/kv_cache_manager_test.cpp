#include "engine/cache/kv_cache_manager.h"

#include "engine/core/error.h"

#include <gtest/gtest.h>

#include <climits>
#include <numeric>
#include <vector>

namespace sluice {
namespace {

using Ids = std::vector<int32_t>;

Ids table_of(const KvCacheManager& kv, RequestId request_id) {
  const auto table = kv.block_table(request_id);
  return Ids(table.begin(), table.end());
}

Ids iota_tokens(int n, int32_t first = 100) {
  Ids tokens(static_cast<size_t>(n));
  std::iota(tokens.begin(), tokens.end(), first);
  return tokens;
}

TEST(KvCacheManager, AllocatesBlocksAndComputesSlots) {
  KvCacheManager kv({.num_blocks = 8, .block_size = 4});
  ASSERT_TRUE(kv.allocate_slots(1, 6));
  kv.check_invariants();
  EXPECT_EQ(table_of(kv, 1), (Ids{0, 1}));
  ASSERT_TRUE(kv.allocate_slots(2, 3));
  EXPECT_EQ(table_of(kv, 2), (Ids{2}));
  EXPECT_EQ(kv.slot(1, 0), 0);
  EXPECT_EQ(kv.slot(1, 5), 5);   // block 1, offset 1
  EXPECT_EQ(kv.slot(2, 2), 10);  // block 2, offset 2
  // Filling the partial block takes no new block; crossing into the next one does.
  ASSERT_TRUE(kv.allocate_slots(1, 2));
  EXPECT_EQ(table_of(kv, 1), (Ids{0, 1}));
  ASSERT_TRUE(kv.allocate_slots(1, 1));
  EXPECT_EQ(table_of(kv, 1), (Ids{0, 1, 3}));
  EXPECT_EQ(kv.slot(1, 8), 12);
  EXPECT_EQ(kv.num_allocated_tokens(1), 9);
  EXPECT_EQ(kv.num_used_blocks(), 4);
  kv.check_invariants();
}

TEST(KvCacheManager, AllocationFailsWithoutChangingAnything) {
  KvCacheManager kv({.num_blocks = 4, .block_size = 4});
  ASSERT_TRUE(kv.allocate_slots(1, 10));  // 3 blocks
  EXPECT_FALSE(kv.can_allocate_slots(1, 7));
  EXPECT_FALSE(kv.allocate_slots(1, 7));  // 17 tokens need 5 blocks
  kv.check_invariants();
  EXPECT_EQ(table_of(kv, 1), (Ids{0, 1, 2}));
  EXPECT_EQ(kv.num_allocated_tokens(1), 10);
  EXPECT_EQ(kv.num_free_blocks(), 1);

  ASSERT_TRUE(kv.allocate_slots(2, 4));  // exhausts the pool
  EXPECT_EQ(kv.num_free_blocks(), 0);
  EXPECT_FALSE(kv.allocate_slots(3, 1));
  EXPECT_FALSE(kv.has_request(3));
  EXPECT_TRUE(kv.allocate_slots(1, 2));  // the partial block still has room
  kv.check_invariants();
  EXPECT_FALSE(kv.allocate_slots(1, 1));
  kv.check_invariants();
}

TEST(KvCacheManager, FreedPrefixIsRevivedButNeverCoversTheLastToken) {
  KvCacheManager kv({.num_blocks = 8, .block_size = 4});
  const Ids tokens = iota_tokens(12);
  ASSERT_TRUE(kv.allocate_slots(1, 12));
  kv.cache_full_blocks(1, tokens, 12);
  kv.check_invariants();
  kv.free(1);
  kv.check_invariants();
  EXPECT_EQ(kv.num_cached_free_blocks(), 3);

  // The same 12 tokens: the last one must be computed, so only 2 blocks are a hit.
  CachedPrefix same = kv.find_cached_prefix(tokens);
  EXPECT_EQ(same.block_ids, (Ids{0, 1}));
  EXPECT_EQ(same.num_tokens, 8);

  Ids longer = tokens;
  longer.push_back(7);
  const CachedPrefix prefix = kv.find_cached_prefix(longer);
  EXPECT_EQ(prefix.block_ids, (Ids{0, 1, 2}));
  EXPECT_EQ(prefix.num_tokens, 12);
  EXPECT_EQ(kv.num_cached_free_blocks(), 3);  // a lookup changes nothing

  ASSERT_TRUE(kv.allocate_slots(2, 1, prefix));
  kv.check_invariants();
  EXPECT_EQ(table_of(kv, 2), (Ids{0, 1, 2, 3}));
  EXPECT_EQ(kv.num_allocated_tokens(2), 13);
  EXPECT_EQ(kv.num_cached_free_blocks(), 0);
  EXPECT_EQ(kv.prefix_cache_stats().num_queries, 1);
  EXPECT_EQ(kv.prefix_cache_stats().num_query_tokens, 13);
  EXPECT_EQ(kv.prefix_cache_stats().num_hit_tokens, 12);
  EXPECT_DOUBLE_EQ(kv.prefix_cache_stats().hit_rate(), 12.0 / 13.0);

  // A block in use is shared, not revived: ref counts go up.
  const CachedPrefix shared = kv.find_cached_prefix(longer);
  ASSERT_TRUE(kv.allocate_slots(3, 1, shared));
  kv.check_invariants();
  EXPECT_EQ(kv.block_pool().block(0).ref_count, 2);
  EXPECT_EQ(table_of(kv, 3), (Ids{0, 1, 2, 4}));
}

TEST(KvCacheManager, OnlyFullComputedBlocksAreCached) {
  KvCacheManager kv({.num_blocks = 8, .block_size = 4});
  const Ids tokens = iota_tokens(10);
  ASSERT_TRUE(kv.allocate_slots(1, 10));
  kv.cache_full_blocks(1, tokens, 5);
  kv.check_invariants();
  EXPECT_EQ(kv.find_cached_prefix(tokens).num_tokens, 4);
  kv.cache_full_blocks(1, tokens, 10);
  kv.check_invariants();
  EXPECT_EQ(kv.find_cached_prefix(tokens).num_tokens, 8);
  EXPECT_FALSE(kv.block_pool().block(2).has_hash);  // partial
  // A different second block shares only the first one.
  Ids other = tokens;
  other[5] = 0;
  EXPECT_EQ(kv.find_cached_prefix(other).num_tokens, 4);
}

TEST(KvCacheManager, AllocationCountsRevivedBlocksAgainstTheFreeBlocks) {
  KvCacheManager kv({.num_blocks = 3, .block_size = 2});
  const Ids tokens = iota_tokens(5);
  ASSERT_TRUE(kv.allocate_slots(1, 4));
  kv.cache_full_blocks(1, tokens, 4);
  kv.free(1);
  const CachedPrefix prefix = kv.find_cached_prefix(tokens);
  ASSERT_EQ(prefix.num_tokens, 4);
  // 2 revived + 1 new = all 3 free blocks; one more token would need a 4th.
  EXPECT_FALSE(kv.can_allocate_slots(1, 3, prefix));
  EXPECT_FALSE(kv.allocate_slots(1, 3, prefix));
  kv.check_invariants();
  EXPECT_EQ(kv.num_cached_free_blocks(), 2);
  EXPECT_TRUE(kv.allocate_slots(1, 1, prefix));
  kv.check_invariants();
  EXPECT_EQ(kv.num_free_blocks(), 0);
}

TEST(KvCacheManager, FreeQueuesASequenceTailFirstAndReusesItFirst) {
  KvCacheManager kv({.num_blocks = 3, .block_size = 4});
  const Ids tokens = iota_tokens(12);
  ASSERT_TRUE(kv.allocate_slots(1, 12));
  kv.cache_full_blocks(1, tokens, 12);
  kv.free(1);
  kv.check_invariants();
  EXPECT_EQ(kv.block_pool().free_block_ids(), (Ids{2, 1, 0}));

  // A new request takes the sequence's last block; its head stays revivable.
  ASSERT_TRUE(kv.allocate_slots(2, 4));
  kv.check_invariants();
  EXPECT_EQ(table_of(kv, 2), (Ids{2}));
  Ids longer = tokens;
  longer.push_back(1);
  EXPECT_EQ(kv.find_cached_prefix(longer).block_ids, (Ids{0, 1}));
}

TEST(KvCacheManager, LeastRecentlyFreedRequestIsEvictedFirst) {
  KvCacheManager kv({.num_blocks = 4, .block_size = 2});
  const Ids first = {1, 2, 3};
  const Ids second = {4, 5, 6};
  ASSERT_TRUE(kv.allocate_slots(1, 2));
  ASSERT_TRUE(kv.allocate_slots(2, 2));
  kv.cache_full_blocks(1, first, 2);
  kv.cache_full_blocks(2, second, 2);
  kv.free(1);
  kv.free(2);
  ASSERT_TRUE(kv.allocate_slots(3, 6));  // 3 blocks: the 2 never-used ones, then request 1's
  kv.check_invariants();
  EXPECT_EQ(table_of(kv, 3), (Ids{2, 3, 0}));
  EXPECT_EQ(kv.find_cached_prefix(first).num_tokens, 0);
  EXPECT_EQ(kv.find_cached_prefix(second).num_tokens, 2);
}

TEST(KvCacheManager, ForkSharesBlocksAndCopiesTheLastOnWrite) {
  KvCacheManager kv({.num_blocks = 8, .block_size = 4});
  ASSERT_TRUE(kv.allocate_slots(1, 6));  // blocks 0 (full) and 1 (2 of 4 tokens)
  ASSERT_TRUE(kv.can_fork(1, 2));
  kv.fork(1, 2);
  kv.check_invariants();
  EXPECT_FALSE(kv.can_fork(1, 2));
  EXPECT_EQ(table_of(kv, 2), (Ids{0, 1}));
  EXPECT_EQ(kv.block_pool().block(0).ref_count, 2);
  EXPECT_EQ(kv.block_pool().block(1).ref_count, 2);

  // The child's write into the shared partial block copies it first.
  ASSERT_TRUE(kv.allocate_slots(2, 1));
  kv.check_invariants();
  EXPECT_EQ(table_of(kv, 2), (Ids{0, 2}));
  EXPECT_EQ(table_of(kv, 1), (Ids{0, 1}));
  EXPECT_EQ(kv.take_block_copies(), (std::vector<BlockCopy>{{1, 2}}));
  kv.check_invariants();
  EXPECT_EQ(kv.block_pool().block(1).ref_count, 1);
  EXPECT_EQ(kv.block_pool().block(0).ref_count, 2);

  // The parent is now the block's only holder and writes in place.
  ASSERT_TRUE(kv.allocate_slots(1, 1));
  EXPECT_EQ(table_of(kv, 1), (Ids{0, 1}));
  EXPECT_TRUE(kv.take_block_copies().empty());
  kv.check_invariants();
}

TEST(KvCacheManager, ForkAtABlockBoundaryNeedsNoCopy) {
  KvCacheManager kv({.num_blocks = 8, .block_size = 4});
  ASSERT_TRUE(kv.allocate_slots(1, 8));
  kv.fork(1, 2);
  ASSERT_TRUE(kv.allocate_slots(2, 1));
  ASSERT_TRUE(kv.allocate_slots(1, 1));
  EXPECT_TRUE(kv.take_block_copies().empty());
  EXPECT_EQ(table_of(kv, 1), (Ids{0, 1, 3}));
  EXPECT_EQ(table_of(kv, 2), (Ids{0, 1, 2}));
  kv.check_invariants();
}

TEST(KvCacheManager, ThreeSharersMakeTwoCopiesAndTheLastWritesInPlace) {
  KvCacheManager kv({.num_blocks = 8, .block_size = 4});
  ASSERT_TRUE(kv.allocate_slots(1, 2));
  kv.fork(1, 2);
  kv.fork(1, 3);
  ASSERT_TRUE(kv.allocate_slots(2, 1));
  ASSERT_TRUE(kv.allocate_slots(3, 1));
  ASSERT_TRUE(kv.allocate_slots(1, 1));
  kv.check_invariants();
  EXPECT_EQ(kv.take_block_copies(), (std::vector<BlockCopy>{{0, 1}, {0, 2}}));
  EXPECT_EQ(table_of(kv, 1), (Ids{0}));
  EXPECT_EQ(table_of(kv, 2), (Ids{1}));
  EXPECT_EQ(table_of(kv, 3), (Ids{2}));
  kv.check_invariants();
}

// The copy source must survive until the backend copied it, even when its last table lets go.
TEST(KvCacheManager, CopySourceIsPinnedUntilTheCopiesAreTaken) {
  KvCacheManager kv({.num_blocks = 3, .block_size = 4});
  ASSERT_TRUE(kv.allocate_slots(1, 2));
  kv.fork(1, 2);
  ASSERT_TRUE(kv.allocate_slots(2, 1));  // copies block 0 into block 1
  kv.free(1);
  kv.check_invariants();
  EXPECT_EQ(kv.block_pool().block(0).ref_count, 1);
  EXPECT_EQ(kv.block_pool().free_block_ids(), (Ids{2}));
  ASSERT_TRUE(kv.allocate_slots(3, 1));
  EXPECT_EQ(table_of(kv, 3), (Ids{2}));  // not the pinned block 0
  EXPECT_EQ(kv.take_block_copies(), (std::vector<BlockCopy>{{0, 1}}));
  kv.check_invariants();
  EXPECT_EQ(kv.block_pool().free_block_ids(), (Ids{0}));
}

TEST(KvCacheManager, PrefixCachingOffFindsNothing) {
  KvCacheManager kv({.num_blocks = 4, .block_size = 2, .enable_prefix_caching = false});
  const Ids tokens = iota_tokens(5);
  ASSERT_TRUE(kv.allocate_slots(1, 5));
  kv.cache_full_blocks(1, tokens, 5);
  kv.free(1);
  kv.check_invariants();
  EXPECT_EQ(kv.find_cached_prefix(tokens).num_tokens, 0);
  EXPECT_EQ(kv.num_cached_free_blocks(), 0);
}

TEST(KvCacheManager, RejectsMisuse) {
  EXPECT_THROW(KvCacheManager({.num_blocks = 0}), Error);
  EXPECT_THROW(KvCacheManager({.num_blocks = 4, .block_size = 0}), Error);
  KvCacheManager kv({.num_blocks = 4, .block_size = 2});
  const Ids tokens = iota_tokens(5);
  ASSERT_TRUE(kv.allocate_slots(1, 4));
  kv.cache_full_blocks(1, tokens, 4);
  const CachedPrefix prefix = kv.find_cached_prefix(tokens);
  ASSERT_FALSE(prefix.block_ids.empty());
  EXPECT_FALSE(kv.can_allocate_slots(1, 1, prefix));
  EXPECT_THROW(kv.allocate_slots(1, 1, prefix), Error);
  EXPECT_THROW(kv.cache_full_blocks(1, tokens, 5), Error);  // only 4 slots
  EXPECT_THROW(kv.cache_full_blocks(9, tokens, 2), Error);
  EXPECT_THROW(kv.fork(9, 10), Error);
  kv.check_invariants();
}

TEST(KvCacheManager, SizesThePoolFromTheBudget) {
  EXPECT_EQ(KvCacheManager::num_blocks_for_budget(1000, 100), 10);
  EXPECT_EQ(KvCacheManager::num_blocks_for_budget(1099, 100), 10);
  EXPECT_EQ(KvCacheManager::num_blocks_for_budget(99, 100), 0);
  EXPECT_EQ(KvCacheManager::num_blocks_for_budget(SIZE_MAX, 1), INT_MAX);
  EXPECT_THROW(KvCacheManager::num_blocks_for_budget(1000, 0), Error);
}

}  // namespace
}  // namespace sluice
