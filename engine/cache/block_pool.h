// The pool of physical KV blocks: ref counts, the free queue and the prefix table.
//
// Free blocks wait in one queue in LRU order: allocation takes from the head, freeing appends
// to the tail. A freed block that caches a prefix keeps its hash while it waits, so a later
// request with the same prefix can revive it; allocation evicts the hash only when the block is
// finally reused. Reviving takes a block from anywhere in the queue, which is why the queue is
// an intrusive doubly linked list (links in Block): removal from the middle is O(1) with no
// search and no allocation, while the order of the remaining blocks (the LRU order) is kept.
#pragma once

#include "engine/cache/block.h"

#include <cstdint>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

namespace sluice {

class BlockPool {
 public:
  // Creates num_blocks free blocks (ids 0..num_blocks-1, queued in id order). num_blocks >= 1.
  BlockPool(int num_blocks, bool enable_prefix_caching);

  int num_blocks() const { return static_cast<int>(blocks_.size()); }
  bool enable_prefix_caching() const { return enable_prefix_caching_; }
  // Blocks with ref count 0, revivable ones included: all of them can be allocated.
  int num_free_blocks() const { return num_free_blocks_; }
  // Free blocks that still carry a prefix hash and can be revived by a prefix hit.
  int num_cached_free_blocks() const { return num_cached_free_blocks_; }
  // Blocks held by at least one block table.
  int num_used_blocks() const { return num_blocks() - num_free_blocks_; }

  // Returns the bookkeeping of block_id. Precondition: 0 <= block_id < num_blocks().
  const Block& block(int32_t block_id) const;

  // Returns true when allocate(num_blocks) can succeed.
  bool can_allocate(int num_blocks) const { return num_blocks <= num_free_blocks_; }
  // Takes num_blocks from the free queue's head (least recently freed first), evicting any
  // cached hash, each with ref count 1. Precondition: can_allocate(num_blocks).
  std::vector<int32_t> allocate(int num_blocks);

  // Adds a holder to block_id; a free block (a revived prefix hit) leaves the free queue.
  void add_ref(int32_t block_id);
  // Drops a holder; at ref count 0 the block goes to the free queue's tail, keeping its hash.
  // Precondition: the block's ref count is > 0.
  void release(int32_t block_id);

  // Returns the block that caches exactly (parent_hash, token_ids) under hash, in use or free,
  // or nothing. The stored parent hash and tokens are compared, never the hash alone.
  std::optional<int32_t> find_cached_block(uint64_t hash, uint64_t parent_hash,
                                           std::span<const int32_t> token_ids) const;
  // Registers a full, computed block under hash so that others may reuse it. Returns false and
  // leaves the block unregistered when another block already caches that hash (the content is
  // then shared through that block) or prefix caching is off. Precondition: the block is held.
  bool cache_block(int32_t block_id, uint64_t hash, uint64_t parent_hash,
                   std::span<const int32_t> token_ids);

  // Returns the free block ids from head (next to be allocated) to tail.
  std::vector<int32_t> free_block_ids() const;

  // Verifies the free queue's links and counters against the ref counts, and the prefix table
  // against the blocks' hashes. Throws sluice::Error naming the first violation.
  void check_invariants() const;

 private:
  void push_free_back(int32_t block_id);
  void remove_free(int32_t block_id);
  void evict_hash(Block& block);
  void check_free_queue() const;
  void check_prefix_table() const;

  std::vector<Block> blocks_;
  std::unordered_map<uint64_t, int32_t> prefix_table_;  // hash -> block carrying it
  int32_t free_head_id_ = kNoBlock;
  int32_t free_tail_id_ = kNoBlock;
  int num_free_blocks_ = 0;
  int num_cached_free_blocks_ = 0;
  bool enable_prefix_caching_ = true;
};

}  // namespace sluice
