// A copy-on-write order from the KV cache manager to the backend: copy every layer's K and V of
// block src into block dst, before the step's forward pass (which writes dst, and may append to
// src for the request that kept it). Orders of one step are independent of each other (no block
// is both a source and a destination, and a source is not handed out again before the forward
// pass), so the backend may apply them in any order or all at once.
#pragma once

#include <cstdint>

namespace sluice {

struct BlockCopy {
  int32_t src_block_id = -1;
  int32_t dst_block_id = -1;

  bool operator==(const BlockCopy&) const = default;
};

}  // namespace sluice
