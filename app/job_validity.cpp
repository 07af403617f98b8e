#include "app/job_validity.h"

#include "engine/core/error.h"

namespace sluice {

const OutputCheck& JobValidity::check_for(const GrammarSource& source) {
  const std::string key = str_cat(to_string(source.kind), ":", source.text);
  const auto it = checks_.find(key);
  if (it != checks_.end()) return *it->second;
  if (checks_.size() >= 64) checks_.clear();
  std::unique_ptr<OutputCheck> check;
  const bool is_json =
      source.kind == GrammarSourceKind::JsonSchema || source.kind == GrammarSourceKind::JsonObject;
  try {
    // A JSON source is judged without its grammar unless the validator cannot read it.
    if (is_json) check = std::make_unique<OutputCheck>(source, nullptr);
  } catch (const Error&) {
  }
  if (!check) check = std::make_unique<OutputCheck>(source, grammars_.get(source));
  return *checks_.emplace(key, std::move(check)).first->second;
}

void JobValidity::judge(RowResult& row, const GrammarSource& source) {
  const OutputCheck* check = nullptr;
  std::string error;
  try {
    check = &check_for(source);
  } catch (const Error& e) {
    error = e.what();
  }
  for (SampleResult& sample : row.samples) {
    if (!check) {
      sample.valid = false;
      sample.invalid_reason = error;
      continue;
    }
    const OutputVerdict verdict = check->check(sample.output);
    sample.valid = verdict.is_valid;
    sample.invalid_reason = verdict.reason;
  }
}

}  // namespace sluice
