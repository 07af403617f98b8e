// The arguments of a call, a filter or a test, and their binding to parameter names the way
// Python binds a simple signature (positional first, then by keyword).
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/template/template_value.h"

namespace sluice::jinja {

struct CallArgs {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> keyword;

  // Returns the keyword argument `name`, or nullptr.
  const Value* find_keyword(std::string_view name) const;
};

// Binds CallArgs to a list of parameter names; throws RenderFault naming the function for an
// unexpected keyword, too many positional arguments, a parameter given twice, or a missing
// required parameter.
class BoundArgs {
 public:
  BoundArgs(const CallArgs& args, std::initializer_list<std::string_view> params,
            size_t num_required, std::string_view function_name);

  // Returns true when parameter index was given.
  bool has(size_t index) const { return slots_[index] != nullptr; }
  // Returns parameter index. Precondition: has(index).
  const Value& get(size_t index) const { return *slots_[index]; }
  // Returns parameter index, or fallback when it was not given.
  Value get_or(size_t index, Value fallback) const {
    return has(index) ? get(index) : std::move(fallback);
  }

 private:
  std::vector<const Value*> slots_;
};

}  // namespace sluice::jinja
