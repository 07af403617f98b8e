// A state-slot copy order from the state pool to the backend: copy the whole recurrent state of
// slot src into slot dst (a fork's state, a prefix checkpoint saved or restored), before the
// step's forward pass. Like BlockCopy, the orders of one step are independent: no slot is both a
// source and a destination, and a source is pinned (not handed out again) until the orders are
// taken, so the backend may apply them in any order.
#pragma once

#include <cstdint>

namespace sluice {

struct StateCopy {
  int32_t src_slot = -1;
  int32_t dst_slot = -1;

  bool operator==(const StateCopy&) const = default;
};

}  // namespace sluice
