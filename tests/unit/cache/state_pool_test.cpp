#include "engine/cache/state_pool.h"

#include "engine/core/error.h"

#include <gtest/gtest.h>

#include <numeric>
#include <vector>

namespace sluice {
namespace {

using Copies = std::vector<StateCopy>;

std::vector<int32_t> state_pool_tokens(int n, int32_t first = 10) {
  std::vector<int32_t> tokens(static_cast<size_t>(n));
  std::iota(tokens.begin(), tokens.end(), first);
  return tokens;
}

TEST(StatePool, RefusesAPoolWithoutSlots) {
  EXPECT_THROW(StatePool({.num_slots = 0}), Error);
  EXPECT_THROW(StatePool({.num_slots = 2, .max_checkpoints = -1}), Error);
}

TEST(StatePool, OneSlotPerRequestUntilNoneIsFree) {
  StatePool pool({.num_slots = 2});
  ASSERT_TRUE(pool.can_acquire());
  const int32_t a = pool.acquire(1);
  const int32_t b = pool.acquire(2);
  EXPECT_NE(a, b);
  EXPECT_EQ(pool.slot_of(1), a);
  EXPECT_FALSE(pool.can_acquire());
  EXPECT_EQ(pool.num_request_slots(), 2);
  pool.release(1);
  EXPECT_FALSE(pool.has_slot(1));
  ASSERT_TRUE(pool.can_acquire());
  EXPECT_EQ(pool.acquire(3), a);
  EXPECT_TRUE(pool.take_copies().empty());
  pool.check_invariants();
}

TEST(StatePool, AForkCopiesTheParentAndPinsItUntilTheCopyIsTaken) {
  StatePool pool({.num_slots = 3});
  const int32_t parent = pool.acquire(1);
  ASSERT_TRUE(pool.fork(1, 2));
  const int32_t child = pool.slot_of(2);
  // The parent finishes before the step: its slot must not be handed out while the copy that
  // reads it is pending.
  pool.release(1);
  EXPECT_EQ(pool.num_free_slots(), 1);
  pool.check_invariants();
  EXPECT_EQ(pool.take_copies(), (Copies{{parent, child}}));
  EXPECT_EQ(pool.num_free_slots(), 2);
  pool.check_invariants();
}

TEST(StatePool, AForkWithoutAFreeSlotChangesNothing) {
  StatePool pool({.num_slots = 1});
  pool.acquire(1);
  EXPECT_FALSE(pool.fork(1, 2));
  EXPECT_FALSE(pool.has_slot(2));
  EXPECT_TRUE(pool.take_copies().empty());
}

TEST(StatePool, ACopyIntoAReleasedSlotIsCancelled) {
  StatePool pool({.num_slots = 3});
  const int32_t parent = pool.acquire(1);
  ASSERT_TRUE(pool.fork(1, 2));
  const int32_t child = pool.slot_of(2);
  pool.release(2);  // the child ends before the copy: its slot may be someone else's next
  pool.check_invariants();
  EXPECT_TRUE(pool.take_copies().empty());
  EXPECT_EQ(pool.num_free_slots(), 2);
  EXPECT_NE(parent, child);
}

TEST(StatePool, ACheckpointIsFoundOnlyAfterItsSaveIsTaken) {
  StatePool pool({.num_slots = 3, .max_checkpoints = 2});
  const int32_t slot = pool.acquire(1);
  const std::vector<int32_t> tokens = state_pool_tokens(12);
  const std::vector<uint64_t> hashes = {101, 102, 103};  // blocks of 4
  ASSERT_TRUE(pool.save_checkpoint(1, hashes[1], std::span(tokens).first(8)));
  EXPECT_EQ(pool.find_checkpoint(hashes, tokens, 4), 0);  // being written
  const Copies copies = pool.take_copies();
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_EQ(copies[0].src_slot, slot);
  EXPECT_EQ(pool.find_checkpoint(hashes, tokens, 4), 2);
  // Equal hashes with other tokens (a collision) miss.
  std::vector<int32_t> other = tokens;
  other[3] = 999;
  EXPECT_EQ(pool.find_checkpoint(hashes, other, 4), 0);
  // A restore copies it into the request's slot.
  const int32_t second = pool.acquire(2);
  pool.restore_checkpoint(2, hashes[1]);
  EXPECT_EQ(pool.take_copies(), (Copies{{copies[0].dst_slot, second}}));
  EXPECT_EQ(pool.checkpoint_stats().num_restored, 1);
  pool.check_invariants();
}

TEST(StatePool, TheLeastRecentlyUsedCheckpointIsEvicted) {
  StatePool pool({.num_slots = 4, .max_checkpoints = 2});
  pool.acquire(1);
  const std::vector<int32_t> tokens = state_pool_tokens(4);
  ASSERT_TRUE(pool.save_checkpoint(1, 11, tokens));
  ASSERT_TRUE(pool.save_checkpoint(1, 22, state_pool_tokens(4, 50)));
  pool.take_copies();
  // 11 is used again, so 22 is the least recently used when a third comes.
  pool.acquire(2);
  pool.restore_checkpoint(2, 11);
  pool.take_copies();
  ASSERT_TRUE(pool.save_checkpoint(1, 33, state_pool_tokens(4, 90)));
  pool.take_copies();
  EXPECT_EQ(pool.num_checkpoints(), 2);
  EXPECT_EQ(pool.find_checkpoint(std::vector<uint64_t>{11}, tokens, 4), 1);
  EXPECT_EQ(pool.find_checkpoint(std::vector<uint64_t>{22}, state_pool_tokens(4, 50), 4), 0);
  EXPECT_EQ(pool.checkpoint_stats().num_evicted, 1);
  pool.check_invariants();
}

TEST(StatePool, ARequestEvictsACheckpointForASlotButNotAPinnedOne) {
  StatePool pool({.num_slots = 2, .max_checkpoints = 1});
  pool.acquire(1);
  const std::vector<int32_t> tokens = state_pool_tokens(4);
  ASSERT_TRUE(pool.save_checkpoint(1, 7, tokens));
  EXPECT_FALSE(pool.can_acquire());  // the checkpoint is still being written
  pool.take_copies();
  pool.release(1);
  pool.acquire(2);
  pool.restore_checkpoint(2, 7);
  // The checkpoint is read by a pending copy: nobody may take its slot.
  EXPECT_FALSE(pool.can_acquire());
  pool.take_copies();
  // Read, it may go: a request's slot comes before a checkpoint, but never the one kept.
  EXPECT_FALSE(pool.can_acquire(true, 7));
  ASSERT_TRUE(pool.can_acquire());
  pool.acquire(3);
  EXPECT_EQ(pool.num_checkpoints(), 0);
  EXPECT_EQ(pool.checkpoint_stats().num_evicted, 1);
  pool.check_invariants();
}

TEST(StatePool, NoCheckpointsWhenNoneAreAllowed) {
  StatePool pool({.num_slots = 3, .max_checkpoints = 0});
  pool.acquire(1);
  EXPECT_FALSE(pool.save_checkpoint(1, 5, state_pool_tokens(4)));
  EXPECT_TRUE(pool.take_copies().empty());
}

}  // namespace
}  // namespace sluice
