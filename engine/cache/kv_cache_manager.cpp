#include "engine/cache/kv_cache_manager.h"

#include "engine/cache/block_hash.h"
#include "engine/core/error.h"

#include <algorithm>
#include <cassert>
#include <limits>
#include <unordered_set>

namespace sluice {

KvCacheManager::KvCacheManager(const KvCacheConfig& config)
    : config_(config), pool_(config.num_blocks, config.enable_prefix_caching) {
  if (config.block_size < 1)
    fail("KV cache: block_size must be at least 1, got ", config.block_size);
  if (config.sliding_window < 0)
    fail("KV cache: sliding_window must be 0 (none) or positive, got ", config.sliding_window);
}

int KvCacheManager::num_blocks_for_budget(size_t kv_budget_bytes, size_t bytes_per_block) {
  if (bytes_per_block == 0) fail("KV cache: a block of 0 bytes cannot size the pool");
  const size_t num_blocks = kv_budget_bytes / bytes_per_block;
  return static_cast<int>(std::min<size_t>(num_blocks, std::numeric_limits<int>::max()));
}

int KvCacheManager::num_blocks_for_tokens(int num_tokens) const {
  return (num_tokens + config_.block_size - 1) / config_.block_size;
}

int KvCacheManager::num_blocks_to_compute(int num_tokens) const {
  const int window = config_.sliding_window, block_size = config_.block_size;
  if (window <= 0 || num_tokens <= window) return num_blocks_for_tokens(num_tokens);
  // The query at position p needs positions p - window + 1 .. p; how many blocks they span
  // depends only on where the first one falls in its block. First positions 0 ..
  // num_tokens - window occur, so every offset up to that (at most a block's worth).
  int num_blocks = 0;
  const int last_first_position = std::min(num_tokens - window, block_size - 1);
  for (int first = 0; first <= last_first_position; ++first) {
    num_blocks = std::max(num_blocks, (first + window - 1) / block_size - first / block_size + 1);
  }
  return num_blocks;
}

CachedPrefix KvCacheManager::find_cached_prefix(std::span<const int32_t> token_ids) const {
  CachedPrefix prefix;
  prefix.num_query_tokens = static_cast<int>(token_ids.size());
  if (!config_.enable_prefix_caching || token_ids.empty()) return prefix;
  const int block_size = config_.block_size;
  // At least the last token stays uncached: its forward pass yields the logits to sample from.
  const int max_num_blocks = static_cast<int>(token_ids.size() - 1) / block_size;
  uint64_t parent_hash = kRootBlockHash;
  for (int i = 0; i < max_num_blocks; ++i) {
    const auto block_tokens = token_ids.subspan(static_cast<size_t>(i) * block_size, block_size);
    const uint64_t hash = hash_block(parent_hash, block_tokens);
    const std::optional<int32_t> block_id =
        pool_.find_cached_block(hash, parent_hash, block_tokens);
    if (!block_id) break;
    prefix.block_ids.push_back(*block_id);
    prefix.block_hashes.push_back(hash);
    parent_hash = hash;
  }
  prefix.num_tokens = static_cast<int>(prefix.block_ids.size()) * block_size;
  return prefix;
}

bool KvCacheManager::can_allocate_slots(RequestId request_id, int num_new_tokens,
                                        const CachedPrefix& prefix) const {
  const RequestBlocks* entry = find_entry(request_id);
  if (entry != nullptr && !prefix.block_ids.empty()) return false;
  return num_blocks_to_take(entry, num_new_tokens, prefix) <= pool_.num_free_blocks();
}

bool KvCacheManager::allocate_slots(RequestId request_id, int num_new_tokens,
                                    const CachedPrefix& prefix) {
  assert(num_new_tokens >= 0 && "a request cannot give back slots");
  if (find_entry(request_id) != nullptr && !prefix.block_ids.empty()) {
    fail("KV cache: request ", request_id, " already has blocks; a cached prefix only starts one");
  }
  if (prefix.num_tokens != static_cast<int>(prefix.block_ids.size()) * config_.block_size) {
    fail("KV cache: a cached prefix of ", prefix.block_ids.size(), " blocks cannot cover ",
         prefix.num_tokens, " tokens");
  }
  if (!can_allocate_slots(request_id, num_new_tokens, prefix)) return false;

  auto [it, is_new] = requests_.try_emplace(request_id);
  RequestBlocks& entry = it->second;
  if (is_new) {
    for (const int32_t block_id : prefix.block_ids) {
      // A stale prefix (blocks reused since the lookup) would serve someone else's K/V.
      assert(pool_.block(block_id).has_hash && "prefix block evicted since find_cached_prefix");
      pool_.add_ref(block_id);
    }
    entry.block_ids = prefix.block_ids;
    entry.num_tokens = prefix.num_tokens;
    if (prefix.num_query_tokens > 0) {
      ++prefix_cache_stats_.num_queries;
      prefix_cache_stats_.num_query_tokens += prefix.num_query_tokens;
      prefix_cache_stats_.num_hit_tokens += prefix.num_tokens;
    }
  }
  if (needs_copy_on_write(entry, num_new_tokens)) copy_on_write_last_block(entry);
  const int num_fresh = num_blocks_for_tokens(entry.num_tokens + num_new_tokens) -
                        static_cast<int>(entry.block_ids.size());
  const std::vector<int32_t> fresh = pool_.allocate(num_fresh);
  entry.block_ids.insert(entry.block_ids.end(), fresh.begin(), fresh.end());
  entry.num_tokens += num_new_tokens;
  return true;
}

int KvCacheManager::num_new_tokens_that_fit(RequestId request_id, int num_new_tokens,
                                            const CachedPrefix& prefix) const {
  // More tokens never need fewer blocks, so the ones that fit are a range from 0.
  int lo = 0, hi = num_new_tokens;
  while (lo < hi) {
    const int mid = lo + (hi - lo + 1) / 2;
    if (can_allocate_slots(request_id, mid, prefix)) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo;
}

std::vector<BlockCopy> KvCacheManager::take_block_copies() {
  // The sources kept the copying request's reference until now; the backend reads them before
  // anything allocated later can write them.
  for (const BlockCopy& copy : pending_block_copies_) pool_.release(copy.src_block_id);
  std::vector<BlockCopy> copies;
  copies.swap(pending_block_copies_);
  return copies;
}

bool KvCacheManager::can_fork(RequestId parent_id, RequestId child_id) const {
  return find_entry(parent_id) != nullptr && find_entry(child_id) == nullptr;
}

void KvCacheManager::fork(RequestId parent_id, RequestId child_id) {
  if (!can_fork(parent_id, child_id)) {
    fail("KV cache: cannot fork request ", parent_id, " into ", child_id,
         " (the parent needs blocks, the child must have none)");
  }
  RequestBlocks child = *find_entry(parent_id);
  for (const int32_t block_id : child.block_ids) {
    if (block_id != kNoBlock) pool_.add_ref(block_id);
  }
  requests_.emplace(child_id, std::move(child));
}

void KvCacheManager::free(RequestId request_id) {
  const auto it = requests_.find(request_id);
  if (it == requests_.end()) return;
  const std::vector<int32_t>& block_ids = it->second.block_ids;
  // Last logical block first: the queue's head is evicted first, and a prefix is only useful
  // from its start, so the tail of a sequence should go before its head.
  for (auto block_it = block_ids.rbegin(); block_it != block_ids.rend(); ++block_it) {
    if (*block_it != kNoBlock) pool_.release(*block_it);
  }
  requests_.erase(it);
}

void KvCacheManager::free_blocks_outside_window(RequestId request_id, int num_computed_tokens) {
  if (config_.sliding_window <= 0) return;
  const auto it = requests_.find(request_id);
  if (it == requests_.end()) fail("KV cache: request ", request_id, " has no blocks to free");
  RequestBlocks& entry = it->second;
  if (num_computed_tokens > entry.num_tokens) {
    fail("KV cache: request ", request_id, " cannot have computed ", num_computed_tokens,
         " tokens with ", entry.num_tokens, " slots");
  }
  // Queries from position num_computed_tokens on see nothing before first_visible.
  const int first_visible = num_computed_tokens - config_.sliding_window + 1;
  const int num_invisible_blocks = std::max(first_visible, 0) / config_.block_size;
  for (; entry.num_freed_blocks < num_invisible_blocks; ++entry.num_freed_blocks) {
    int32_t& block_id = entry.block_ids[static_cast<size_t>(entry.num_freed_blocks)];
    // A full block, hashed already if prefix caching is on: it keeps its hash in the free queue.
    pool_.release(block_id);
    block_id = kNoBlock;
  }
}

void KvCacheManager::cache_full_blocks(RequestId request_id, std::span<const int32_t> token_ids,
                                       int num_computed_tokens) {
  if (!config_.enable_prefix_caching) return;
  const auto it = requests_.find(request_id);
  if (it == requests_.end()) fail("KV cache: request ", request_id, " has no blocks to cache");
  RequestBlocks& entry = it->second;
  if (num_computed_tokens > entry.num_tokens ||
      num_computed_tokens > static_cast<int>(token_ids.size())) {
    fail("KV cache: request ", request_id, " cannot have computed ", num_computed_tokens,
         " tokens with ", entry.num_tokens, " slots and ", token_ids.size(), " token ids");
  }
  const int block_size = config_.block_size;
  const size_t num_full_blocks = static_cast<size_t>(num_computed_tokens / block_size);
  while (entry.block_hashes.size() < num_full_blocks) {
    const size_t i = entry.block_hashes.size();
    const uint64_t parent_hash = i == 0 ? kRootBlockHash : entry.block_hashes[i - 1];
    const auto block_tokens = token_ids.subspan(i * block_size, block_size);
    const uint64_t hash = hash_block(parent_hash, block_tokens);
    // A block freed outside the window still extends the hash chain of the blocks after it.
    if (entry.block_ids[i] != kNoBlock)
      pool_.cache_block(entry.block_ids[i], hash, parent_hash, block_tokens);
    entry.block_hashes.push_back(hash);
  }
}

void CachedPrefix::truncate(int num_blocks, int block_size) {
  if (num_blocks >= static_cast<int>(block_ids.size())) return;
  block_ids.resize(static_cast<size_t>(num_blocks));
  block_hashes.resize(std::min(block_hashes.size(), static_cast<size_t>(num_blocks)));
  num_tokens = num_blocks * block_size;
}

std::span<const uint64_t> KvCacheManager::block_hashes(RequestId request_id) const {
  const RequestBlocks* entry = find_entry(request_id);
  if (entry == nullptr) return {};
  return entry->block_hashes;
}

bool KvCacheManager::has_request(RequestId request_id) const {
  return find_entry(request_id) != nullptr;
}

std::span<const int32_t> KvCacheManager::block_table(RequestId request_id) const {
  const RequestBlocks* entry = find_entry(request_id);
  if (entry == nullptr) return {};
  return entry->block_ids;
}

int KvCacheManager::num_allocated_tokens(RequestId request_id) const {
  const RequestBlocks* entry = find_entry(request_id);
  return entry == nullptr ? 0 : entry->num_tokens;
}

int KvCacheManager::num_held_tokens(RequestId request_id) const {
  const RequestBlocks* entry = find_entry(request_id);
  return entry == nullptr ? 0 : entry->num_tokens - entry->num_freed_blocks * config_.block_size;
}

int64_t KvCacheManager::slot(RequestId request_id, int position) const {
  const RequestBlocks* entry = find_entry(request_id);
  // A position without a slot has no K/V to write or read.
  assert(entry != nullptr && position >= 0 && position < entry->num_tokens);
  const int block_size = config_.block_size;
  // Blocks outside the window were given back: nothing is written there any more.
  assert(position / block_size >= entry->num_freed_blocks && "slot in a freed block");
  return static_cast<int64_t>(entry->block_ids[position / block_size]) * block_size +
         position % block_size;
}

const KvCacheManager::RequestBlocks* KvCacheManager::find_entry(RequestId request_id) const {
  const auto it = requests_.find(request_id);
  return it == requests_.end() ? nullptr : &it->second;
}

int KvCacheManager::num_blocks_to_take(const RequestBlocks* entry, int num_new_tokens,
                                       const CachedPrefix& prefix) const {
  if (entry != nullptr) {
    int num_blocks = num_blocks_for_tokens(entry->num_tokens + num_new_tokens) -
                     static_cast<int>(entry->block_ids.size());
    if (needs_copy_on_write(*entry, num_new_tokens)) ++num_blocks;
    return num_blocks;
  }
  int num_blocks = num_blocks_for_tokens(prefix.num_tokens + num_new_tokens) -
                   static_cast<int>(prefix.block_ids.size());
  // Reviving a free cached block takes it out of the free count like a fresh allocation.
  for (const int32_t block_id : prefix.block_ids) {
    if (pool_.block(block_id).ref_count == 0) ++num_blocks;
  }
  return num_blocks;
}

bool KvCacheManager::needs_copy_on_write(const RequestBlocks& entry, int num_new_tokens) const {
  // Only a partial last block is ever written again; a full one is followed by a fresh block.
  if (num_new_tokens == 0 || entry.num_tokens % config_.block_size == 0) return false;
  const int32_t block_id = entry.block_ids.back();
  // Pins of pending copies only keep the source alive for the copy, which the backend applies
  // before any write: the last table holding the block may write it in place.
  return pool_.block(block_id).ref_count - num_pins(block_id) > 1;
}

int KvCacheManager::num_pins(int32_t block_id) const {
  return static_cast<int>(
      std::count_if(pending_block_copies_.begin(), pending_block_copies_.end(),
                    [block_id](const BlockCopy& copy) { return copy.src_block_id == block_id; }));
}

void KvCacheManager::copy_on_write_last_block(RequestBlocks& entry) {
  const int32_t src_block_id = entry.block_ids.back();
  const int32_t dst_block_id = pool_.allocate(1).front();
  entry.block_ids.back() = dst_block_id;
  // The request's reference to src moves to the pending copy and is dropped by
  // take_block_copies(): until the backend copied src, it must not be reused and overwritten.
  pending_block_copies_.push_back(BlockCopy{src_block_id, dst_block_id});
}

void KvCacheManager::check_invariants() const {
  pool_.check_invariants();
  check_tables();
}

void KvCacheManager::check_tables() const {
  std::vector<int> num_holders(static_cast<size_t>(num_blocks()), 0);
  for (const auto& [request_id, entry] : requests_) {
    if (static_cast<int>(entry.block_ids.size()) != num_blocks_for_tokens(entry.num_tokens)) {
      fail("KV cache: request ", request_id, " holds ", entry.block_ids.size(), " blocks for ",
           entry.num_tokens, " tokens");
    }
    if (entry.block_hashes.size() > entry.block_ids.size()) {
      fail("KV cache: request ", request_id, " hashed more blocks than it holds");
    }
    // Only blocks that no query can see any more are given back: those wholly before the
    // window of a query at the last allocated position (or later).
    if (entry.num_freed_blocks < 0 ||
        (entry.num_freed_blocks > 0 &&
         (config_.sliding_window <= 0 || entry.num_freed_blocks * config_.block_size >
                                             entry.num_tokens - config_.sliding_window + 1))) {
      fail("KV cache: request ", request_id, " gave back ", entry.num_freed_blocks,
           " blocks of its ", entry.num_tokens, " tokens with sliding window ",
           config_.sliding_window);
    }
    std::unordered_set<int32_t> seen;
    for (size_t i = 0; i < entry.block_ids.size(); ++i) {
      const int32_t block_id = entry.block_ids[i];
      if (static_cast<int>(i) < entry.num_freed_blocks) {
        if (block_id != kNoBlock)
          fail("KV cache: request ", request_id, " block ", i, " was given back but is held");
        continue;
      }
      if (block_id < 0 || block_id >= num_blocks()) {
        fail("KV cache: request ", request_id, " holds bad block id ", block_id);
      }
      if (!seen.insert(block_id).second) {
        fail("KV cache: request ", request_id, " holds block ", block_id, " twice");
      }
      ++num_holders[block_id];
      const Block& block = pool_.block(block_id);
      if (i < entry.block_hashes.size() && block.has_hash && block.hash != entry.block_hashes[i]) {
        fail("KV cache: request ", request_id, " block ", i, " carries another prefix's hash");
      }
    }
  }
  for (const BlockCopy& copy : pending_block_copies_) ++num_holders[copy.src_block_id];
  for (int32_t block_id = 0; block_id < num_blocks(); ++block_id) {
    const int ref_count = pool_.block(block_id).ref_count;
    if (ref_count != num_holders[block_id]) {
      fail("KV cache: block ", block_id, " has ref count ", ref_count, " but ",
           num_holders[block_id], " holders");
    }
  }
}

}  // namespace sluice
