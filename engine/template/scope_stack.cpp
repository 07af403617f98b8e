#include "engine/template/scope_stack.h"

#include <cassert>

namespace sluice::jinja {

ScopeStack::ScopeStack(const Dict* variables) : frames_(1), variables_(variables) {}

const Value* ScopeStack::find(std::string_view name) const {
  for (size_t i = num_frames_; i-- > 0;) {
    for (const auto& [key, value] : frames_[i].bindings) {
      if (key == name) return &value;
    }
    // Past an isolated frame only the top level (frame 0) is visible.
    if (frames_[i].is_isolated && i > 1) i = 1;
  }
  return variables_ != nullptr ? variables_->find(name) : nullptr;
}

void ScopeStack::set(std::string_view name, Value value) {
  auto& bindings = frames_[num_frames_ - 1].bindings;
  for (auto& [key, bound] : bindings) {
    if (key == name) {
      bound = std::move(value);
      return;
    }
  }
  bindings.emplace_back(std::string(name), std::move(value));
}

void ScopeStack::push(bool is_isolated) {
  if (num_frames_ == frames_.size()) frames_.emplace_back();
  Frame& frame = frames_[num_frames_++];
  frame.bindings.clear();
  frame.is_isolated = is_isolated;
}

void ScopeStack::pop() {
  assert(num_frames_ > 1 && "the top-level frame is never popped");
  frames_[--num_frames_].bindings.clear();  // release the values now, keep the storage
}

void ScopeStack::clear_innermost() {
  frames_[num_frames_ - 1].bindings.clear();
}

}  // namespace sluice::jinja
