#include "engine/template/render_budget.h"

#include "engine/template/render_fault.h"

namespace sluice::jinja {

void RenderBudget::count_step() {
  if (++num_steps_ > max_steps_) {
    render_fail("the template ran more than ", max_steps_,
                " loop iterations and macro calls (a runaway loop or recursion?)");
  }
}

void RenderBudget::spend_bytes(uint64_t num_bytes) {
  num_bytes_ = num_bytes > UINT64_MAX - num_bytes_ ? UINT64_MAX : num_bytes_ + num_bytes;
  if (num_bytes_ > max_bytes_) {
    render_fail("the template worked through more than ", max_bytes_,
                " bytes of values and output (a runaway template?)");
  }
}

void RenderBudget::spend_args(const CallArgs& args) {
  for (const Value& arg : args.positional) spend_value(arg);
  for (const auto& [name, arg] : args.keyword) spend_value(arg);
}

void RenderBudget::spend_search(uint64_t haystack_bytes, uint64_t needle_bytes) {
  const uint64_t factor = needle_bytes + 1;
  spend_bytes(haystack_bytes > UINT64_MAX / factor ? UINT64_MAX : haystack_bytes * factor);
}

void RenderBudget::enter() {
  // Fails before the level is entered, so the guard that called this never leaves it.
  if (nesting_ >= kMaxRenderNesting) {
    render_fail("the template nests expressions, blocks and calls more than ", kMaxRenderNesting,
                " levels deep");
  }
  ++nesting_;
}

}  // namespace sluice::jinja
