// The `loop` variable inside a for loop: index, index0, revindex, revindex0, first, last,
// length, previtem, nextitem, depth, depth0 and cycle(...). One object per loop, advanced in
// place each iteration, so a loop over a row's messages allocates it once.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "engine/template/template_value.h"

namespace sluice::jinja {

class LoopObject final : public Object {
 public:
  // Renders the loop's body over other items, one level deeper (what loop(children) does in a
  // recursive loop) and returns the text.
  using Recurse = std::function<Value(RenderState& state, const Value& items)>;

  // items: what the loop runs over (already filtered by the loop's `if`); depth0: 0 for the
  // outermost level; recurse: set for a recursive loop only.
  LoopObject(ListPtr items, size_t depth0, Recurse recurse)
      : items_(std::move(items)), depth0_(depth0), recurse_(std::move(recurse)) {}

  // Moves to iteration index0.
  void set_index(size_t index0) { index0_ = index0; }

  std::string type_name() const override { return "LoopContext"; }
  std::string repr() const override;
  std::optional<Value> attribute(std::string_view name) const override;
  bool is_callable() const override { return true; }
  // loop(items) in a recursive loop; fails elsewhere.
  Value call(RenderState& state, const CallArgs& args) const override;

 private:
  ListPtr items_;
  size_t index0_ = 0;
  size_t depth0_;
  Recurse recurse_;
};

}  // namespace sluice::jinja
