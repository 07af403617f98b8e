#include "engine/cache/state_pool.h"

#include "engine/core/error.h"

#include <algorithm>
#include <cassert>

namespace sluice {

StatePool::StatePool(const StatePoolConfig& config) : config_(config) {
  if (config.num_slots < 1)
    fail("state pool: a hybrid model needs at least one state slot, got ", config.num_slots);
  if (config.max_checkpoints < 0)
    fail("state pool: max_checkpoints must be 0 or more, got ", config.max_checkpoints);
  slots_.resize(static_cast<size_t>(config.num_slots));
  // A stack popped from the back: slot 0 first.
  for (int32_t slot = config.num_slots - 1; slot >= 0; --slot) free_slots_.push_back(slot);
}

bool StatePool::can_acquire(bool has_keep, uint64_t keep_hash) const {
  if (!free_slots_.empty()) return true;
  bool found = false;
  evictable_checkpoint(has_keep, keep_hash, found);
  return found;
}

int32_t StatePool::acquire(RequestId request_id, bool has_keep, uint64_t keep_hash) {
  assert(!has_slot(request_id) && "a request holds one state slot at most");
  int32_t slot = kNoStateSlot;
  if (!free_slots_.empty()) {
    slot = pop_free_slot();
  } else {
    bool found = false;
    const uint64_t hash = evictable_checkpoint(has_keep, keep_hash, found);
    // can_acquire() promised a free slot or an evictable checkpoint.
    assert(found && "acquire() without can_acquire()");
    if (!found) fail("state pool: no state slot for request ", request_id);
    slot = evict(hash);
  }
  Slot& held = slots_[static_cast<size_t>(slot)];
  held.is_request = true;
  held.request_id = request_id;
  request_slots_.emplace(request_id, slot);
  return slot;
}

int32_t StatePool::slot_of(RequestId request_id) const {
  const auto it = request_slots_.find(request_id);
  return it == request_slots_.end() ? kNoStateSlot : it->second;
}

void StatePool::release(RequestId request_id) {
  const auto it = request_slots_.find(request_id);
  if (it == request_slots_.end()) return;
  const int32_t slot = it->second;
  request_slots_.erase(it);
  Slot& held = slots_[static_cast<size_t>(slot)];
  held.is_request = false;
  held.request_id = 0;
  // A copy into it (a fork's state, a restored checkpoint) is for nobody now; left pending, it
  // could land after another copy into the slot's next holder.
  std::vector<int32_t> sources;
  std::erase_if(pending_copies_, [&](const StateCopy& copy) {
    if (copy.dst_slot != slot) return false;
    sources.push_back(copy.src_slot);
    return true;
  });
  for (const int32_t source : sources) {
    --slots_[static_cast<size_t>(source)].num_pins;
    free_slot_if_unheld(source);
  }
  // A pending copy still reads it: it joins the free list when the copy is taken.
  free_slot_if_unheld(slot);
}

bool StatePool::fork(RequestId parent_id, RequestId child_id) {
  const int32_t parent_slot = slot_of(parent_id);
  assert(parent_slot != kNoStateSlot && !has_slot(child_id));
  if (parent_slot == kNoStateSlot || !can_acquire()) return false;
  const int32_t child_slot = acquire(child_id);
  order_copy(parent_slot, child_slot);
  return true;
}

int StatePool::find_checkpoint(std::span<const uint64_t> block_hashes,
                               std::span<const int32_t> token_ids, int block_size) const {
  for (size_t num_blocks = block_hashes.size(); num_blocks > 0; --num_blocks) {
    const auto it = checkpoints_.find(block_hashes[num_blocks - 1]);
    if (it == checkpoints_.end() || !it->second.is_ready) continue;
    const size_t num_tokens = num_blocks * static_cast<size_t>(block_size);
    // Equal hashes are not enough: a collision must miss instead of serving another state.
    if (it->second.token_ids.size() != num_tokens || token_ids.size() < num_tokens ||
        !std::equal(it->second.token_ids.begin(), it->second.token_ids.end(), token_ids.begin()))
      continue;
    return static_cast<int>(num_blocks);
  }
  return 0;
}

void StatePool::restore_checkpoint(RequestId request_id, uint64_t hash) {
  const int32_t slot = slot_of(request_id);
  Checkpoint& checkpoint = checkpoints_.at(hash);
  assert(slot != kNoStateSlot && checkpoint.is_ready);
  checkpoint.last_used = ++use_clock_;
  order_copy(checkpoint.slot, slot);
  ++checkpoint_stats_.num_restored;
}

bool StatePool::save_checkpoint(RequestId request_id, uint64_t hash,
                                std::span<const int32_t> prefix_tokens) {
  const int32_t src_slot = slot_of(request_id);
  assert(src_slot != kNoStateSlot);
  if (config_.max_checkpoints == 0 || src_slot == kNoStateSlot) return false;
  if (const auto it = checkpoints_.find(hash); it != checkpoints_.end()) {
    it->second.last_used = ++use_clock_;
    return true;
  }
  int32_t slot = kNoStateSlot;
  if (num_checkpoints() < config_.max_checkpoints && !free_slots_.empty()) {
    slot = pop_free_slot();
  } else {
    bool found = false;
    const uint64_t victim = evictable_checkpoint(false, 0, found);
    if (!found) return false;
    slot = evict(victim);
  }
  slots_[static_cast<size_t>(slot)].is_checkpoint = true;
  checkpoints_.emplace(hash, Checkpoint{.slot = slot,
                                        .token_ids = {prefix_tokens.begin(), prefix_tokens.end()},
                                        .is_ready = false,
                                        .last_used = ++use_clock_});
  order_copy(src_slot, slot);
  pending_saves_.push_back(hash);
  ++checkpoint_stats_.num_saved;
  return true;
}

std::vector<StateCopy> StatePool::take_copies() {
  std::vector<StateCopy> copies;
  copies.swap(pending_copies_);
  for (const StateCopy& copy : copies) {
    --slots_[static_cast<size_t>(copy.src_slot)].num_pins;
    free_slot_if_unheld(copy.src_slot);
  }
  for (const uint64_t hash : pending_saves_) checkpoints_.at(hash).is_ready = true;
  pending_saves_.clear();
  return copies;
}

int32_t StatePool::pop_free_slot() {
  const int32_t slot = free_slots_.back();
  free_slots_.pop_back();
  return slot;
}

uint64_t StatePool::evictable_checkpoint(bool has_keep, uint64_t keep_hash, bool& found) const {
  found = false;
  uint64_t best_hash = 0, best_used = 0;
  for (const auto& [hash, checkpoint] : checkpoints_) {
    if (!checkpoint.is_ready || slots_[static_cast<size_t>(checkpoint.slot)].num_pins > 0) continue;
    if (has_keep && hash == keep_hash) continue;
    if (!found || checkpoint.last_used < best_used) {
      found = true;
      best_hash = hash;
      best_used = checkpoint.last_used;
    }
  }
  return best_hash;
}

int32_t StatePool::evict(uint64_t hash) {
  const auto it = checkpoints_.find(hash);
  const int32_t slot = it->second.slot;
  // Only a ready checkpoint nobody reads is evicted (evictable_checkpoint's rule).
  assert(it->second.is_ready && slots_[static_cast<size_t>(slot)].num_pins == 0);
  checkpoints_.erase(it);
  slots_[static_cast<size_t>(slot)].is_checkpoint = false;
  ++checkpoint_stats_.num_evicted;
  return slot;
}

void StatePool::order_copy(int32_t src_slot, int32_t dst_slot) {
  assert(src_slot != dst_slot);
  ++slots_[static_cast<size_t>(src_slot)].num_pins;
  pending_copies_.push_back(StateCopy{src_slot, dst_slot});
}

void StatePool::free_slot_if_unheld(int32_t slot) {
  const Slot& held = slots_[static_cast<size_t>(slot)];
  if (!held.is_request && !held.is_checkpoint && held.num_pins == 0) free_slots_.push_back(slot);
}

void StatePool::check_invariants() const {
  std::vector<int> num_owners(slots_.size(), 0);
  std::vector<int> num_pins(slots_.size(), 0);
  for (const int32_t slot : free_slots_) {
    if (slot < 0 || slot >= num_slots()) fail("state pool: free list holds bad slot ", slot);
    ++num_owners[static_cast<size_t>(slot)];
  }
  for (const auto& [request_id, slot] : request_slots_) {
    const Slot& held = slots_[static_cast<size_t>(slot)];
    if (!held.is_request || held.request_id != request_id)
      fail("state pool: slot ", slot, " is request ", request_id, "'s but not marked so");
    ++num_owners[static_cast<size_t>(slot)];
  }
  for (const auto& [hash, checkpoint] : checkpoints_) {
    if (!slots_[static_cast<size_t>(checkpoint.slot)].is_checkpoint)
      fail("state pool: checkpoint slot ", checkpoint.slot, " is not marked a checkpoint");
    ++num_owners[static_cast<size_t>(checkpoint.slot)];
  }
  if (num_checkpoints() > config_.max_checkpoints)
    fail("state pool: ", num_checkpoints(), " checkpoints, more than ", config_.max_checkpoints);
  for (const StateCopy& copy : pending_copies_) ++num_pins[static_cast<size_t>(copy.src_slot)];
  for (size_t slot = 0; slot < slots_.size(); ++slot) {
    const Slot& held = slots_[slot];
    if (held.num_pins != num_pins[slot])
      fail("state pool: slot ", slot, " has ", held.num_pins, " pins but ", num_pins[slot],
           " pending copies read it");
    // A slot with no owner is free, or pinned by a copy until take_copies frees it.
    const int expected = held.num_pins > 0 && !held.is_request && !held.is_checkpoint ? 0 : 1;
    if (num_owners[slot] != expected)
      fail("state pool: slot ", slot, " has ", num_owners[slot], " owners (free list, request, ",
           "checkpoint)");
  }
  int num_ready = 0;
  for (const uint64_t hash : pending_saves_) {
    if (!checkpoints_.contains(hash) || checkpoints_.at(hash).is_ready)
      fail("state pool: a pending save has no checkpoint waiting for it");
  }
  for (const auto& [hash, checkpoint] : checkpoints_) num_ready += checkpoint.is_ready ? 1 : 0;
  if (num_ready + static_cast<int>(pending_saves_.size()) != num_checkpoints())
    fail("state pool: checkpoints neither ready nor being saved");
}

}  // namespace sluice
