// JSON in and out of the interpreter. Render variables arrive as JSON and become values once
// per render; the tojson filter writes values the way transformers' tojson does, which is
// Python's json.dumps (ensure_ascii=False by default, ", " and ": " separators without indent,
// "," and ": " with one, floats as Python's repr, non-ASCII text kept as UTF-8).
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/template/template_value.h"

namespace sluice::jinja {

// Returns the value of a JSON document (objects keep their key order). Throws RenderFault
// past 512 levels of nesting.
Value value_from_json(const nlohmann::ordered_json& json);

struct JsonDumpOptions {
  std::optional<std::string> indent;  // the text of one level; nullopt writes one line
  std::string item_separator = ", ";
  std::string key_separator = ": ";
  bool sort_keys = false;
  bool ensure_ascii = false;  // escape non-ASCII as \uXXXX
};

// Returns json.dumps(value, ...). Throws RenderFault for values JSON cannot hold (undefined,
// namespaces, functions), with Python's message.
std::string python_json_dumps(const Value& value, const JsonDumpOptions& options);

}  // namespace sluice::jinja
