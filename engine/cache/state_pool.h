// The recurrent-state pool of a hybrid model (Qwen3.5's Gated DeltaNet layers beside attention):
// a fixed number of state slots beside the KV block pool, each holding one sequence's state over
// every recurrent layer. The state itself lives in the backend (Backend::allocate_state_slots);
// this is its bookkeeping.
//
// A slot is free, held by one running request, or holds a *checkpoint*: the state after a
// prefix of whole KV blocks, keyed by the hash chain of the prefix's last block (and verified
// against its tokens, never the hash alone). A state is not a sum of blocks, so a KV prefix hit
// on a hybrid model is usable only up to the longest prefix with a checkpoint; a request that
// starts there first copies the checkpoint into its own slot.
//
// Copies (fork, checkpoint save, checkpoint restore) are ordered here and applied by the backend
// before the next forward pass (take_copies). Until then their sources are pinned: a released
// slot that is a pending source returns to the free list only once the copy is taken, and a
// checkpoint being read or written cannot be evicted. A checkpoint being written becomes visible
// to lookups only when its save is taken, so no step both writes and reads one.
//
// Checkpoints are at most max_checkpoints, in spare slots: a request that needs a slot when none
// is free evicts the least recently used unpinned checkpoint.
#pragma once

#include "engine/cache/state_copy.h"
#include "engine/core/request_id.h"

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

namespace sluice {

inline constexpr int32_t kNoStateSlot = -1;

struct StatePoolConfig {
  int num_slots = 0;        // >= 1
  int max_checkpoints = 0;  // checkpoints kept at once (0: none)
};

// Counted since construction.
struct StateCheckpointStats {
  int64_t num_saved = 0;     // checkpoints written
  int64_t num_restored = 0;  // requests started from one
  int64_t num_evicted = 0;   // dropped for a slot (LRU)
};

class StatePool {
 public:
  // Throws sluice::Error unless num_slots >= 1 and max_checkpoints >= 0.
  explicit StatePool(const StatePoolConfig& config);

  int num_slots() const { return static_cast<int>(slots_.size()); }
  int max_checkpoints() const { return config_.max_checkpoints; }
  int num_free_slots() const { return static_cast<int>(free_slots_.size()); }
  int num_request_slots() const { return static_cast<int>(request_slots_.size()); }
  int num_checkpoints() const { return static_cast<int>(checkpoints_.size()); }
  const StateCheckpointStats& checkpoint_stats() const { return checkpoint_stats_; }

  // Returns true when acquire() would succeed: a free slot, or a checkpoint that may be evicted
  // other than the one keyed keep_hash (when has_keep).
  bool can_acquire(bool has_keep = false, uint64_t keep_hash = 0) const;
  // Gives request_id a slot: a free one, else the least recently used evictable checkpoint's
  // (never keep_hash's). Returns the slot. Precondition: can_acquire(...) and no slot held yet.
  int32_t acquire(RequestId request_id, bool has_keep = false, uint64_t keep_hash = 0);
  // Returns request_id's slot, kNoStateSlot when it holds none.
  int32_t slot_of(RequestId request_id) const;
  bool has_slot(RequestId request_id) const { return slot_of(request_id) != kNoStateSlot; }
  // Gives the slot back (finish, abort, preemption). No-op without one.
  void release(RequestId request_id);
  // Gives child_id a slot with a copy of parent_id's state ordered. Returns false (nothing
  // changed) when no slot can be had; the child must then start over. Precondition: the
  // parent holds a slot and the child none.
  bool fork(RequestId parent_id, RequestId child_id);

  // Returns how many leading blocks of the prefix whose hash chain is block_hashes (hash of
  // blocks 0..i at i) have a checkpoint: the longest such prefix, verified against token_ids
  // (which cover at least that prefix). 0 when none. Changes nothing.
  int find_checkpoint(std::span<const uint64_t> block_hashes, std::span<const int32_t> token_ids,
                      int block_size) const;
  // Orders the copy of the checkpoint keyed hash into request_id's slot and marks it recently
  // used. Precondition: find_checkpoint found it and the request holds a slot.
  void restore_checkpoint(RequestId request_id, uint64_t hash);
  // Orders a save of request_id's state (after prefix_tokens, a whole number of blocks whose
  // chain ends in hash) as a checkpoint, into a free slot while there are fewer than
  // max_checkpoints, else into the least recently used evictable checkpoint's slot. Returns
  // false when no slot can be had; true also when that checkpoint exists already (then only
  // marked used). Precondition: the request holds a slot.
  bool save_checkpoint(RequestId request_id, uint64_t hash, std::span<const int32_t> prefix_tokens);

  // Returns the copies ordered since the last call, for the backend to apply before the forward
  // pass; unpins their sources and makes the checkpoints they save visible.
  std::vector<StateCopy> take_copies();

  // Verifies that every slot is exactly one of free, a request's or a checkpoint's, the free
  // list, the pins and the counts. Throws sluice::Error naming the violation.
  void check_invariants() const;

 private:
  struct Slot {
    RequestId request_id = 0;  // the holder when is_request
    bool is_request = false;
    bool is_checkpoint = false;
    int num_pins = 0;  // pending copies reading (or, for a new checkpoint, writing) the slot
  };
  struct Checkpoint {
    int32_t slot = kNoStateSlot;
    std::vector<int32_t> token_ids;  // the prefix it follows
    bool is_ready = false;           // its save was taken
    uint64_t last_used = 0;
  };

  int32_t pop_free_slot();
  // Returns the key of the least recently used ready, unpinned checkpoint other than keep's;
  // found is false when there is none.
  uint64_t evictable_checkpoint(bool has_keep, uint64_t keep_hash, bool& found) const;
  // Drops the checkpoint keyed hash and returns its slot, unowned and unpinned.
  int32_t evict(uint64_t hash);
  void order_copy(int32_t src_slot, int32_t dst_slot);
  void free_slot_if_unheld(int32_t slot);

  StatePoolConfig config_;
  std::vector<Slot> slots_;
  std::vector<int32_t> free_slots_;  // a stack: the lowest ids first
  std::unordered_map<RequestId, int32_t> request_slots_;
  std::unordered_map<uint64_t, Checkpoint> checkpoints_;
  std::vector<StateCopy> pending_copies_;
  std::vector<uint64_t> pending_saves_;  // checkpoints written by pending_copies_
  uint64_t use_clock_ = 0;
  StateCheckpointStats checkpoint_stats_;
};

}  // namespace sluice
