#include "engine/cache/block_pool.h"

#include "engine/core/error.h"

#include <algorithm>
#include <cassert>

namespace sluice {

BlockPool::BlockPool(int num_blocks, bool enable_prefix_caching)
    : enable_prefix_caching_(enable_prefix_caching) {
  if (num_blocks < 1) fail("KV cache: the block pool needs at least one block, got ", num_blocks);
  blocks_.resize(static_cast<size_t>(num_blocks));
  for (int32_t block_id = 0; block_id < num_blocks; ++block_id) {
    blocks_[block_id].block_id = block_id;
    push_free_back(block_id);
  }
}

const Block& BlockPool::block(int32_t block_id) const {
  assert(block_id >= 0 && block_id < num_blocks() && "block id out of range");
  return blocks_[block_id];
}

std::vector<int32_t> BlockPool::allocate(int num_blocks) {
  // can_allocate() promised enough free blocks; taking more would corrupt the queue.
  assert(num_blocks >= 0 && can_allocate(num_blocks));
  std::vector<int32_t> block_ids;
  block_ids.reserve(static_cast<size_t>(num_blocks));
  for (int i = 0; i < num_blocks; ++i) {
    const int32_t block_id = free_head_id_;
    Block& block = blocks_[block_id];
    remove_free(block_id);
    // The block is about to be overwritten: its cached prefix is gone for good.
    evict_hash(block);
    block.ref_count = 1;
    block_ids.push_back(block_id);
  }
  return block_ids;
}

void BlockPool::add_ref(int32_t block_id) {
  Block& block = blocks_[block_id];
  if (block.ref_count == 0) remove_free(block_id);
  ++block.ref_count;
}

void BlockPool::release(int32_t block_id) {
  Block& block = blocks_[block_id];
  // A block without holders is in the free queue already; a second release is a double free.
  assert(block.ref_count > 0 && "release of a free block");
  if (--block.ref_count == 0) push_free_back(block_id);
}

std::optional<int32_t> BlockPool::find_cached_block(uint64_t hash, uint64_t parent_hash,
                                                    std::span<const int32_t> token_ids) const {
  if (!enable_prefix_caching_) return std::nullopt;
  const auto it = prefix_table_.find(hash);
  if (it == prefix_table_.end()) return std::nullopt;
  const Block& block = blocks_[it->second];
  // Equal hashes are not enough: a collision must miss instead of serving another prefix's K/V.
  if (block.parent_hash != parent_hash) return std::nullopt;
  if (!std::equal(block.token_ids.begin(), block.token_ids.end(), token_ids.begin(),
                  token_ids.end())) {
    return std::nullopt;
  }
  return it->second;
}

bool BlockPool::cache_block(int32_t block_id, uint64_t hash, uint64_t parent_hash,
                            std::span<const int32_t> token_ids) {
  Block& block = blocks_[block_id];
  // Only a held block was just computed; a free one may already be promised to someone else.
  assert(block.ref_count > 0 && "caching a free block");
  if (!enable_prefix_caching_) return false;
  if (block.has_hash) {
    // A full block is never written again, so it keeps the one hash it was registered under.
    assert(block.hash == hash && block.parent_hash == parent_hash && "block content changed");
    return true;
  }
  if (!prefix_table_.try_emplace(hash, block_id).second) return false;
  block.has_hash = true;
  block.hash = hash;
  block.parent_hash = parent_hash;
  block.token_ids.assign(token_ids.begin(), token_ids.end());
  return true;
}

std::vector<int32_t> BlockPool::free_block_ids() const {
  std::vector<int32_t> block_ids;
  block_ids.reserve(static_cast<size_t>(num_free_blocks_));
  for (int32_t id = free_head_id_; id != kNoBlock; id = blocks_[id].next_free_id) {
    block_ids.push_back(id);
  }
  return block_ids;
}

void BlockPool::push_free_back(int32_t block_id) {
  Block& block = blocks_[block_id];
  assert(!block.is_free && block.ref_count == 0 && "only unheld blocks join the free queue");
  block.is_free = true;
  block.prev_free_id = free_tail_id_;
  block.next_free_id = kNoBlock;
  if (free_tail_id_ != kNoBlock) {
    blocks_[free_tail_id_].next_free_id = block_id;
  } else {
    free_head_id_ = block_id;
  }
  free_tail_id_ = block_id;
  ++num_free_blocks_;
  if (block.has_hash) ++num_cached_free_blocks_;
}

void BlockPool::remove_free(int32_t block_id) {
  Block& block = blocks_[block_id];
  assert(block.is_free && "removing a block that is not in the free queue");
  if (block.prev_free_id != kNoBlock) {
    blocks_[block.prev_free_id].next_free_id = block.next_free_id;
  } else {
    free_head_id_ = block.next_free_id;
  }
  if (block.next_free_id != kNoBlock) {
    blocks_[block.next_free_id].prev_free_id = block.prev_free_id;
  } else {
    free_tail_id_ = block.prev_free_id;
  }
  block.is_free = false;
  block.prev_free_id = kNoBlock;
  block.next_free_id = kNoBlock;
  --num_free_blocks_;
  if (block.has_hash) --num_cached_free_blocks_;
}

void BlockPool::evict_hash(Block& block) {
  if (!block.has_hash) return;
  // The table entry is this block's own: a hash maps to exactly the block that carries it.
  assert(prefix_table_.at(block.hash) == block.block_id);
  prefix_table_.erase(block.hash);
  block.has_hash = false;
  block.hash = 0;
  block.parent_hash = 0;
  block.token_ids.clear();
}

void BlockPool::check_invariants() const {
  check_free_queue();
  check_prefix_table();
}

void BlockPool::check_free_queue() const {
  // Walk the queue from the head; a broken link or a cycle shows up as a bad count or link.
  int num_visited = 0;
  int num_cached = 0;
  int32_t prev_id = kNoBlock;
  for (int32_t id = free_head_id_; id != kNoBlock; id = blocks_[id].next_free_id) {
    if (id < 0 || id >= num_blocks()) fail("block pool: free queue links to bad block id ", id);
    const Block& block = blocks_[id];
    if (++num_visited > num_blocks()) fail("block pool: the free queue has a cycle");
    if (!block.is_free) fail("block pool: block ", id, " is queued but not marked free");
    if (block.ref_count != 0) {
      fail("block pool: block ", id, " is free and held (ref count ", block.ref_count, ")");
    }
    if (block.prev_free_id != prev_id) fail("block pool: block ", id, " has a bad back link");
    if (block.has_hash) ++num_cached;
    prev_id = id;
  }
  if (prev_id != free_tail_id_) fail("block pool: the free queue's tail is not its last block");
  if (num_visited != num_free_blocks_) {
    fail("block pool: ", num_visited, " blocks queued but the counter says ", num_free_blocks_);
  }
  if (num_cached != num_cached_free_blocks_) {
    fail("block pool: ", num_cached, " cached free blocks but the counter says ",
         num_cached_free_blocks_);
  }
  int num_unheld = 0;
  for (const Block& block : blocks_) {
    if (block.ref_count < 0) fail("block pool: block ", block.block_id, " has a negative count");
    if (block.ref_count == 0) ++num_unheld;
    if ((block.ref_count == 0) != block.is_free) {
      fail("block pool: block ", block.block_id, " has ref count ", block.ref_count,
           " but is_free = ", block.is_free);
    }
  }
  if (num_unheld != num_visited) {
    fail("block pool: ", num_unheld, " blocks have ref count 0 but ", num_visited, " are queued");
  }
}

void BlockPool::check_prefix_table() const {
  int num_hashed = 0;
  for (const Block& block : blocks_) {
    if (!block.has_hash) {
      if (!block.token_ids.empty())
        fail("block pool: block ", block.block_id, " keeps stale tokens");
      continue;
    }
    ++num_hashed;
    const auto it = prefix_table_.find(block.hash);
    if (it == prefix_table_.end() || it->second != block.block_id) {
      fail("block pool: block ", block.block_id,
           " carries a hash the prefix table does not map to it");
    }
  }
  for (const auto& [hash, block_id] : prefix_table_) {
    if (block_id < 0 || block_id >= num_blocks())
      fail("block pool: prefix table holds bad id ", block_id);
    const Block& block = blocks_[block_id];
    if (!block.has_hash || block.hash != hash) {
      fail("block pool: prefix table maps hash ", hash, " to block ", block_id,
           " which does not carry it");
    }
  }
  if (num_hashed != static_cast<int>(prefix_table_.size())) {
    fail("block pool: ", num_hashed, " hashed blocks but ", prefix_table_.size(), " table entries");
  }
  if (!enable_prefix_caching_ && num_hashed > 0) fail("block pool: hashes with prefix caching off");
}

}  // namespace sluice
