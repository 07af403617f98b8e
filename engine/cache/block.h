// The bookkeeping of one physical KV block: how many block tables hold it, the prefix it caches
// once it is full and computed, and its links in the pool's free queue. The K/V data itself
// lives in the backend's pool at the same block id.
#pragma once

#include <cstdint>
#include <vector>

namespace sluice {

inline constexpr int32_t kNoBlock = -1;

struct Block {
  int32_t block_id = kNoBlock;
  int ref_count = 0;  // block tables (and pending copy sources) holding the block

  // Set while the block is registered in the prefix table: its content hash, its parent's
  // hash and its token ids, the last two kept to verify every prefix hit exactly.
  bool has_hash = false;
  uint64_t hash = 0;
  uint64_t parent_hash = 0;
  std::vector<int32_t> token_ids;

  // Free-queue links, intrusive so that a prefix hit can pull a block out of the middle of the
  // queue in O(1) (see BlockPool). Valid only while is_free.
  bool is_free = false;
  int32_t prev_free_id = kNoBlock;
  int32_t next_free_id = kNoBlock;
};

}  // namespace sluice
