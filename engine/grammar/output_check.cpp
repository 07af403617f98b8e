#include "engine/grammar/output_check.h"

#include <nlohmann/json.hpp>

#include "engine/core/error.h"
#include "engine/core/json_parse.h"
#include "engine/grammar/grammar_matcher.h"

namespace sluice {

namespace {

// The failures the reason lists at most (the rest are counted).
constexpr size_t kMaxReasons = 3;

}  // namespace

OutputCheck::OutputCheck(const GrammarSource& source, std::shared_ptr<const Grammar> grammar)
    : kind_(source.kind), grammar_(std::move(grammar)) {
  if (kind_ != GrammarSourceKind::JsonSchema) {
    if (kind_ != GrammarSourceKind::JsonObject && !grammar_)
      fail(source.name, ": an output check needs the compiled grammar");
    return;
  }
  try {
    validator_ = JsonSchemaValidator::compile(source.text, source.name);
  } catch (const Error&) {
    if (!grammar_) throw;  // else the grammar judges what the validator cannot
  }
}

OutputVerdict OutputCheck::check(std::string_view output) const {
  const bool is_json = kind_ == GrammarSourceKind::JsonObject ||
                       (kind_ == GrammarSourceKind::JsonSchema && validator_);
  if (!is_json) {  // regex, choice, GBNF, or a schema only its grammar could read
    if (grammar_accepts_text(*grammar_, output)) return {true, ""};
    return {false, "not a sentence of the grammar"};
  }
  nlohmann::json value;
  if (const auto failure = try_parse_json(output, value))
    return {false, describe_json_failure(output, *failure)};
  if (kind_ == GrammarSourceKind::JsonObject) {
    if (value.is_object()) return {true, ""};
    return {false, "not a JSON object"};
  }
  const std::vector<JsonSchemaFailure> failures = validator_->validate(value);
  if (failures.empty()) return {true, ""};
  std::string reason;
  for (size_t i = 0; i < failures.size() && i < kMaxReasons; ++i) {
    if (i > 0) reason += "; ";
    reason += describe_json_schema_failure(failures[i]);
  }
  if (failures.size() > kMaxReasons)
    reason += str_cat(" (and ", failures.size() - kMaxReasons, " more)");
  return {false, reason};
}

}  // namespace sluice
