#include "engine/cache/kv_cache_manager.h"

#include "engine/core/error.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <numeric>
#include <utility>
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

// Window 6, blocks of 4: after n computed tokens the next query (position n) sees n - 5 .. n, so
// block b goes back once 4 * (b + 1) <= n - 5, i.e. its last position is n - 6 or earlier.
TEST(KvCacheManager, GivesBackExactlyTheBlocksNoLaterQueryCanSee) {
  KvCacheManager kv({.num_blocks = 8, .block_size = 4, .sliding_window = 6});
  ASSERT_TRUE(kv.allocate_slots(1, 20));  // blocks 0..4
  const Ids all = table_of(kv, 1);
  const std::vector<std::pair<int, int>> freed_after = {{0, 0},  {5, 0},  {8, 0},  {9, 1}, {12, 1},
                                                        {13, 2}, {16, 2}, {17, 3}, {20, 3}};
  for (const auto& [num_computed, num_freed] : freed_after) {
    kv.free_blocks_outside_window(1, num_computed);
    kv.check_invariants();
    Ids expected = all;
    std::fill_n(expected.begin(), num_freed, kNoBlock);
    EXPECT_EQ(table_of(kv, 1), expected) << num_computed << " computed";
    EXPECT_EQ(kv.num_used_blocks(), 5 - num_freed);
    EXPECT_EQ(kv.num_held_tokens(1), 20 - 4 * num_freed);
    EXPECT_EQ(kv.num_allocated_tokens(1), 20);  // the table keeps its length
  }
  // Growing the table past the freed blocks takes fresh ones for the new positions only.
  ASSERT_TRUE(kv.allocate_slots(1, 5));
  EXPECT_EQ(table_of(kv, 1).size(), 7u);
  EXPECT_EQ(kv.num_used_blocks(), 4);
  EXPECT_EQ(kv.slot(1, 24), int64_t{table_of(kv, 1)[6]} * 4);
  kv.check_invariants();
  kv.free(1);  // releases the held blocks only
  kv.check_invariants();
  EXPECT_EQ(kv.num_used_blocks(), 0);
}

TEST(KvCacheManager, WithoutAWindowNothingIsGivenBack) {
  KvCacheManager kv({.num_blocks = 8, .block_size = 4});
  ASSERT_TRUE(kv.allocate_slots(1, 20));
  kv.free_blocks_outside_window(1, 20);
  EXPECT_EQ(kv.num_used_blocks(), 5);
  EXPECT_EQ(kv.num_held_tokens(1), 20);
  EXPECT_THROW(KvCacheManager({.num_blocks = 8, .block_size = 4, .sliding_window = -1}), Error);
}

// A block given back keeps its hash while it waits in the free queue: its K/V is intact, so a
// later request with the same prefix revives it. Once it is reallocated the hash is gone and
// the prefix hit stops before it.
TEST(KvCacheManager, BlocksGivenBackStayPrefixHitsUntilReused) {
  KvCacheManager kv({.num_blocks = 8, .block_size = 4, .sliding_window = 5});
  Ids tokens = iota_tokens(16);
  ASSERT_TRUE(kv.allocate_slots(1, 16));
  const Ids table = table_of(kv, 1);
  kv.cache_full_blocks(1, tokens, 16);
  kv.free_blocks_outside_window(1, 16);  // the next query sees 12..16: blocks 0..2 go back
  kv.check_invariants();
  EXPECT_EQ(table_of(kv, 1), (Ids{kNoBlock, kNoBlock, kNoBlock, table[3]}));
  EXPECT_EQ(kv.num_cached_free_blocks(), 3);

  tokens.push_back(7);
  CachedPrefix prefix = kv.find_cached_prefix(tokens);
  EXPECT_EQ(prefix.block_ids, table);  // three revivable blocks and one still held
  EXPECT_EQ(prefix.num_tokens, 16);
  ASSERT_TRUE(kv.allocate_slots(2, 1, prefix));
  kv.check_invariants();
  EXPECT_EQ(kv.block_pool().block(table[3]).ref_count, 2);
  kv.free(2);

  // Request 3 takes every free block: the first freed ones (least recently) are reused first.
  ASSERT_TRUE(kv.allocate_slots(3, 4 * kv.num_free_blocks()));
  kv.free(3);
  kv.check_invariants();
  EXPECT_TRUE(kv.find_cached_prefix(tokens).block_ids.empty());
}

TEST(KvCacheManager, ForkAfterGivingBackSharesOnlyTheHeldBlocks) {
  KvCacheManager kv({.num_blocks = 8, .block_size = 4, .sliding_window = 3});
  ASSERT_TRUE(kv.allocate_slots(1, 14));
  kv.free_blocks_outside_window(1, 14);  // the next query sees 12..14: blocks 0..2 go back
  kv.fork(1, 2);
  kv.check_invariants();
  EXPECT_EQ(table_of(kv, 2), table_of(kv, 1));
  EXPECT_EQ(kv.num_used_blocks(), 1);
  EXPECT_EQ(kv.block_pool().block(table_of(kv, 1)[3]).ref_count, 2);
  // The shared partial block is copied on the child's next write, as without a window.
  ASSERT_TRUE(kv.allocate_slots(2, 1));
  EXPECT_EQ(kv.take_block_copies().size(), 1u);
  kv.free(1);
  kv.free(2);
  kv.check_invariants();
  EXPECT_EQ(kv.num_used_blocks(), 0);
}

// What a request must hold at once to compute n tokens one at a time: its window of 6
// positions spans 2 blocks of 4 when it starts at offset 0..2 and 3 when at offset 3.
TEST(KvCacheManager, BlocksToComputeAreBoundedByTheWindow) {
  const KvCacheManager windowed({.num_blocks = 8, .block_size = 4, .sliding_window = 6});
  const std::vector<std::pair<int, int>> expected = {{1, 1}, {4, 1}, {5, 2},  {6, 2},
                                                     {8, 2}, {9, 3}, {20, 3}, {100000, 3}};
  for (const auto& [num_tokens, num_blocks] : expected)
    EXPECT_EQ(windowed.num_blocks_to_compute(num_tokens), num_blocks) << num_tokens << " tokens";
  const KvCacheManager global({.num_blocks = 8, .block_size = 4});
  EXPECT_EQ(global.num_blocks_to_compute(100), 25);
  const KvCacheManager aligned({.num_blocks = 8, .block_size = 4, .sliding_window = 1});
  EXPECT_EQ(aligned.num_blocks_to_compute(100), 1);
}

TEST(KvCacheManager, FindsTheLongestPieceThatFits) {
  KvCacheManager kv({.num_blocks = 4, .block_size = 4});
  ASSERT_TRUE(kv.allocate_slots(1, 6));  // 2 blocks, 2 free slots in the second
  EXPECT_EQ(kv.num_new_tokens_that_fit(1, 100), 10);
  EXPECT_EQ(kv.num_new_tokens_that_fit(1, 7), 7);
  EXPECT_EQ(kv.num_new_tokens_that_fit(2, 100), 8);
  ASSERT_TRUE(kv.allocate_slots(2, 8));
  EXPECT_EQ(kv.num_new_tokens_that_fit(3, 5), 0);
  EXPECT_EQ(kv.num_new_tokens_that_fit(1, 5), 2);
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
