// A picture of the KV pool for the GUI's block map: each block's state and which request (by
// its sample key, i.e. the input row) holds it, and a hybrid model's state slots in use. Taken
// between steps; O(pool size).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace sluice {

enum class KvBlockState : uint8_t {
  Free,        // never used, or its cached prefix was evicted
  CachedFree,  // free, but still holds a prefix a later request can revive
  Owned,       // held by one request
  Shared,      // held by several (a common prefix, or n samples before copy-on-write)
};

struct KvBlockMap {
  std::vector<KvBlockState> states;  // [num_blocks]
  std::vector<int64_t> owner_rows;   // [num_blocks] sample key of a holder, -1 when none
  int block_size = 0;
  // A hybrid model's state slots beside the blocks (all 0 for a model without state).
  int num_state_slots = 0;
  int num_state_slots_used = 0;   // held by running requests
  int num_state_checkpoints = 0;  // holding a prefix checkpoint
  size_t state_slot_bytes = 0;
};

}  // namespace sluice
