// The paged KV cache's bookkeeping per request: block tables over a BlockPool, prefix-cache
// lookups, copy-on-write of shared partial blocks, and the slot of every token position.
//
// A request's table covers exactly the tokens it has slots for (its "allocated tokens"):
// block_table[i] holds positions [i * block_size, (i + 1) * block_size). Slots are allocated
// for the tokens a step will compute, so after the step the allocated tokens equal the
// request's num_computed_tokens. Full blocks are hashed and registered only once computed
// (cache_full_blocks), and only then can other requests find them.
//
// Sharing: fork gives a child every block of its parent, partial last block included. A block
// held by more than one table is never written: the next write into it first takes a fresh
// block and orders a BlockCopy, which the backend applies before the forward pass. Full blocks
// are never written again, so only a shared partial last block is ever copied.
//
// Sliding windows: when every layer of the model attends only to a window of recent positions,
// a running request's blocks that lie wholly before the window of every query it can still make
// are given back to the pool (free_blocks_outside_window). Its table keeps its length, with
// kNoBlock in those entries; the attention never reads them. A freed block keeps its prefix
// hash in the free queue like any other: its K/V stays intact until the block is reallocated,
// which evicts the hash, so a later prefix hit on it is still exact.
#pragma once

#include "engine/cache/block_copy.h"
#include "engine/cache/block_pool.h"
#include "engine/core/request_id.h"

#include <cstddef>
#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

namespace sluice {

struct KvCacheConfig {
  int num_blocks = 0;   // physical blocks in the pool (see num_blocks_for_budget)
  int block_size = 16;  // tokens per block
  bool enable_prefix_caching = true;
  // The widest sliding window over the model's layers when every layer has one (Mistral 7B
  // v0.1: 4096), 0 when some layer attends to the whole context. A query at position p sees
  // positions p - sliding_window + 1 .. p.
  int sliding_window = 0;
};

// The cached full blocks at the start of a request's tokens, as found by find_cached_prefix.
struct CachedPrefix {
  std::vector<int32_t> block_ids;  // [num_tokens / block_size] physical ids, in logical order
  int num_tokens = 0;              // tokens the blocks cover, a multiple of block_size
  int num_query_tokens = 0;        // tokens that were looked up, for the hit rate
  // [block_ids.size()] the hash chain of the blocks: block_hashes[i] covers blocks 0..i (a
  // hybrid model's state checkpoints are keyed by it).
  std::vector<uint64_t> block_hashes;

  // Keeps the first num_blocks blocks (a hybrid model's hit ends at its last state checkpoint).
  void truncate(int num_blocks, int block_size);
};

// Prefix-cache statistics, counted when a request starts with its lookup's result.
struct PrefixCacheStats {
  int64_t num_queries = 0;       // requests that started with a lookup
  int64_t num_query_tokens = 0;  // their tokens
  int64_t num_hit_tokens = 0;    // of which found in the cache

  // Returns the fraction of looked-up tokens found in the cache, 0 before any lookup.
  double hit_rate() const {
    return num_query_tokens > 0 ? static_cast<double>(num_hit_tokens) / num_query_tokens : 0.0;
  }
};

class KvCacheManager {
 public:
  // Creates the pool. Throws sluice::Error unless num_blocks >= 1 and block_size >= 1.
  explicit KvCacheManager(const KvCacheConfig& config);

  // Returns how many blocks of bytes_per_block fit in kv_budget_bytes (capped at INT_MAX).
  // Throws sluice::Error when bytes_per_block is 0.
  static int num_blocks_for_budget(size_t kv_budget_bytes, size_t bytes_per_block);

  const KvCacheConfig& config() const { return config_; }
  int block_size() const { return config_.block_size; }
  int num_blocks() const { return pool_.num_blocks(); }
  int num_free_blocks() const { return pool_.num_free_blocks(); }
  int num_cached_free_blocks() const { return pool_.num_cached_free_blocks(); }
  int num_used_blocks() const { return pool_.num_used_blocks(); }
  // Returns the fraction of blocks held by requests, in [0, 1].
  double usage() const { return static_cast<double>(num_used_blocks()) / num_blocks(); }
  // Returns the blocks that num_tokens tokens occupy: ceil(num_tokens / block_size).
  int num_blocks_for_tokens(int num_tokens) const;
  // Returns the fewest blocks a request must hold at once to compute num_tokens tokens one at
  // a time: all of them without a sliding window; with one, the most blocks that the positions
  // one query sees (its window) span, or all when fewer.
  int num_blocks_to_compute(int num_tokens) const;
  const PrefixCacheStats& prefix_cache_stats() const { return prefix_cache_stats_; }
  const BlockPool& block_pool() const { return pool_; }

  // Returns the longest run of cached full blocks at the start of token_ids. It never covers
  // the last token, which must be computed for the model to produce logits. Changes nothing.
  CachedPrefix find_cached_prefix(std::span<const int32_t> token_ids) const;

  // Returns true when allocate_slots(request_id, num_new_tokens, prefix) would succeed.
  bool can_allocate_slots(RequestId request_id, int num_new_tokens,
                          const CachedPrefix& prefix = {}) const;
  // Gives request_id slots for its next num_new_tokens tokens. A request without a table
  // starts here: it first takes the prefix's blocks (reviving free ones), then fresh ones. A
  // write into a shared block copies it first (see take_block_copies). Returns false and
  // changes nothing when the pool cannot supply the blocks. Precondition: a non-empty prefix
  // only for a request without a table, fresh from find_cached_prefix() (no allocation since).
  bool allocate_slots(RequestId request_id, int num_new_tokens, const CachedPrefix& prefix = {});
  // Returns the largest k <= num_new_tokens for which allocate_slots(request_id, k, prefix)
  // would succeed (0 when none does).
  int num_new_tokens_that_fit(RequestId request_id, int num_new_tokens,
                              const CachedPrefix& prefix = {}) const;
  // Returns the copy-on-write orders since the last call, for the backend to apply before the
  // forward pass, and lets their source blocks be reused (they are pinned until then).
  std::vector<BlockCopy> take_block_copies();

  // Returns true when fork(parent_id, child_id) is allowed: the parent has a table, the child
  // has none.
  bool can_fork(RequestId parent_id, RequestId child_id) const;
  // Gives child_id all of parent_id's blocks (each ref count + 1), the partial last one too,
  // and its kNoBlock entries.
  void fork(RequestId parent_id, RequestId child_id);

  // Drops request_id's table (finish, abort or preemption). Blocks left without holders go to
  // the free queue's tail last logical block first, so a sequence's tail is evicted before its
  // head, and keep their hashes for revival. No-op for a request without a table.
  void free(RequestId request_id);

  // With a sliding window, gives back request_id's blocks that no query from position
  // num_computed_tokens on can see (those wholly before num_computed_tokens - sliding_window +
  // 1) and marks them kNoBlock in its table. Call after cache_full_blocks, so that they keep
  // their hashes. No-op without a window. Precondition: num_computed_tokens <= the request's
  // allocated tokens.
  void free_blocks_outside_window(RequestId request_id, int num_computed_tokens);

  // Hashes and registers request_id's blocks that are full and within num_computed_tokens, so
  // that other requests may reuse them. token_ids are the request's tokens (at least
  // num_computed_tokens). Precondition: num_computed_tokens <= the request's allocated tokens.
  void cache_full_blocks(RequestId request_id, std::span<const int32_t> token_ids,
                         int num_computed_tokens);

  // Returns the hash chain of request_id's leading blocks hashed so far (cache_full_blocks):
  // element i covers blocks 0..i. Empty without a table or with prefix caching off.
  std::span<const uint64_t> block_hashes(RequestId request_id) const;

  // Returns true when request_id has a table.
  bool has_request(RequestId request_id) const;
  // Returns request_id's block table (logical -> physical block id, kNoBlock where freed
  // outside the window), empty without a table.
  std::span<const int32_t> block_table(RequestId request_id) const;
  // Returns the tokens request_id has slots for, 0 without a table.
  int num_allocated_tokens(RequestId request_id) const;
  // Returns the slots request_id still holds: its allocated tokens less the freed blocks'.
  int num_held_tokens(RequestId request_id) const;
  // Returns the KV slot of position: block_table[position / block_size] * block_size +
  // position % block_size. Precondition: position < num_allocated_tokens(request_id).
  int64_t slot(RequestId request_id, int position) const;

  // Verifies that every block's ref count equals the tables (and pinned copy sources) holding
  // it, that the free queue holds exactly the unheld blocks, that every table covers its
  // allocated tokens, and the pool's own invariants. Throws sluice::Error naming the violation.
  void check_invariants() const;

 private:
  // One request's share of the cache.
  struct RequestBlocks {
    std::vector<int32_t> block_ids;      // the block table
    int num_tokens = 0;                  // tokens with slots
    int num_freed_blocks = 0;            // leading entries given back (kNoBlock)
    std::vector<uint64_t> block_hashes;  // hash chain of the leading blocks hashed so far
  };

  const RequestBlocks* find_entry(RequestId request_id) const;
  int num_blocks_to_take(const RequestBlocks* entry, int num_new_tokens,
                         const CachedPrefix& prefix) const;
  bool needs_copy_on_write(const RequestBlocks& entry, int num_new_tokens) const;
  int num_pins(int32_t block_id) const;
  void copy_on_write_last_block(RequestBlocks& entry);
  void check_tables() const;

  KvCacheConfig config_;
  BlockPool pool_;
  std::unordered_map<RequestId, RequestBlocks> requests_;
  std::vector<BlockCopy> pending_block_copies_;
  PrefixCacheStats prefix_cache_stats_;
};

}  // namespace sluice
