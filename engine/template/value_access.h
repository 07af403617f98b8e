// Attribute and item access with Jinja2's sandboxed rules. `obj.name` looks for a Python
// attribute first (a str or dict method, a namespace or loop attribute) and then for the item
// obj['name']; `obj[key]` looks for the item first and then for the attribute. A missing one
// is an undefined value carrying Jinja2's message ("'dict object' has no attribute 'x'"),
// which only raises when it is used. Methods that would mutate (list.append, dict.update)
// exist but raise, as in transformers' immutable sandbox.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "engine/template/template_value.h"

namespace sluice::jinja {

// Returns object.name. Throws RenderFault when object is undefined.
Value get_attribute(const Value& object, std::string_view name);

// Returns object[key] (negative indices count from the end). Throws RenderFault when object
// is undefined.
Value get_item(const Value& object, const Value& key);

// Returns object[start:stop:step] for strings and lists. Throws RenderFault for step 0 or a
// value that cannot be sliced.
Value get_slice(const Value& object, std::optional<int64_t> start, std::optional<int64_t> stop,
                std::optional<int64_t> step);

// Follows a filter's attribute path "a.b.0" (Jinja2's make_attrgetter: parts that are all
// digits are integer indices) with item-first lookup.
Value get_path(const Value& object, std::string_view path);

}  // namespace sluice::jinja
