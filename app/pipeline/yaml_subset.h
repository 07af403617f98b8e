// The YAML a pipeline description is written in, when it is not JSON: block mappings and
// sequences by indentation ("key: value", "- item", "- key: value" opening a mapping), plain,
// single- and double-quoted scalars (true/false/null and numbers as YAML 1.2's core schema reads
// them), flow sequences of scalars ("[a, 'b', 3]"), "{}" and "[]", literal blocks ("key: |") for
// long texts such as a rubric, and comments. Anchors, aliases, tags, several documents, flow
// mappings with content and folded blocks are refused by line, never guessed at.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace sluice {

// Returns text as JSON. Throws Error "<name>:<line>: ..." for what it does not read, and for
// nesting deeper than 64 levels.
nlohmann::ordered_json parse_yaml_subset(std::string_view text, const std::string& name);

}  // namespace sluice
