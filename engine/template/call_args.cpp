#include "engine/template/call_args.h"

#include "engine/template/render_fault.h"

namespace sluice::jinja {

const Value* CallArgs::find_keyword(std::string_view name) const {
  for (const auto& [key, value] : keyword) {
    if (key == name) return &value;
  }
  return nullptr;
}

BoundArgs::BoundArgs(const CallArgs& args, std::initializer_list<std::string_view> params,
                     size_t num_required, std::string_view function_name)
    : slots_(params.size(), nullptr) {
  if (args.positional.size() > params.size()) {
    render_fail(function_name, "() takes at most ", params.size(), " argument",
                params.size() == 1 ? "" : "s", " (", args.positional.size(), " given)");
  }
  for (size_t i = 0; i < args.positional.size(); ++i) slots_[i] = &args.positional[i];
  for (const auto& [name, value] : args.keyword) {
    size_t index = 0;
    for (const std::string_view param : params) {
      if (param == name) break;
      ++index;
    }
    if (index == params.size()) {
      render_fail(function_name, "() got an unexpected keyword argument '", name, "'");
    }
    if (slots_[index] != nullptr) {
      render_fail(function_name, "() got multiple values for argument '", name, "'");
    }
    slots_[index] = &value;
  }
  for (size_t i = 0; i < num_required; ++i) {
    if (slots_[i] == nullptr) {
      render_fail(function_name, "() missing required argument '", *(params.begin() + i), "'");
    }
  }
}

}  // namespace sluice::jinja
