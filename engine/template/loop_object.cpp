#include "engine/template/loop_object.h"

#include "engine/template/call_args.h"
#include "engine/template/render_fault.h"

namespace sluice::jinja {

namespace {

// loop.cycle('odd', 'even'): picks the argument at the current index, modulo their number.
class LoopCycle final : public Object {
 public:
  explicit LoopCycle(size_t index0) : index0_(index0) {}

  std::string type_name() const override { return "method"; }
  std::string repr() const override { return "<bound method LoopContext.cycle>"; }
  bool is_callable() const override { return true; }
  Value call(RenderState&, const CallArgs& args) const override {
    if (args.positional.empty()) render_fail("no items for cycling given");
    return args.positional[index0_ % args.positional.size()];
  }

 private:
  size_t index0_;
};

}  // namespace

std::string LoopObject::repr() const {
  return str_cat("<LoopContext ", index0_ + 1, "/", items_->items.size(), ">");
}

std::optional<Value> LoopObject::attribute(std::string_view name) const {
  const auto length = static_cast<int64_t>(items_->items.size());
  const auto index0 = static_cast<int64_t>(index0_);
  if (name == "index0") return Value::integer(index0);
  if (name == "index") return Value::integer(index0 + 1);
  if (name == "revindex") return Value::integer(length - index0);
  if (name == "revindex0") return Value::integer(length - index0 - 1);
  if (name == "first") return Value::boolean(index0 == 0);
  if (name == "last") return Value::boolean(index0 + 1 == length);
  if (name == "length") return Value::integer(length);
  if (name == "depth") return Value::integer(static_cast<int64_t>(depth0_) + 1);
  if (name == "depth0") return Value::integer(static_cast<int64_t>(depth0_));
  if (name == "previtem") {
    if (index0 == 0) return Value::undefined("there is no previous item");
    return items_->items[index0_ - 1];
  }
  if (name == "nextitem") {
    if (index0 + 1 >= length) return Value::undefined("there is no next item");
    return items_->items[index0_ + 1];
  }
  if (name == "cycle") return Value::object(std::make_shared<LoopCycle>(index0_));
  return std::nullopt;
}

Value LoopObject::call(RenderState& state, const CallArgs& args) const {
  if (!recurse_) render_fail("The loop must have the 'recursive' marker to be called recursively.");
  if (args.positional.size() != 1 || !args.keyword.empty()) {
    render_fail("loop() takes exactly one argument, the items to loop over");
  }
  return recurse_(state, args.positional[0]);
}

}  // namespace sluice::jinja
