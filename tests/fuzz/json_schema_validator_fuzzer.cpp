// Feeds the JSON Schema validator (engine/grammar/json_schema_validator.h) a schema and an
// instance, as a user's schema and a model's output reach it. Properties: a schema it refuses is
// refused with an Error naming the source; a compiled schema validates any JSON instance without
// crashing, hanging or listing more than kMaxJsonSchemaFailures failures; is_valid agrees with
// validate; each failure has a keyword and a message; and the output check over the same schema
// agrees with the validator on instances that parse.
//
// Input: the schema text, a NUL, the instance text.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "engine/core/error.h"
#include "engine/core/json_parse.h"
#include "engine/grammar/json_schema_validator.h"
#include "engine/grammar/output_check.h"
#include "tests/fuzz/fuzz_check.h"

using namespace sluice;

namespace {

constexpr std::string_view kSourceName = "fuzz-schema";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t nul = input.find('\0');
  const std::string_view schema = input.substr(0, nul);
  const std::string_view instance_text =
      nul == std::string_view::npos ? std::string_view() : input.substr(nul + 1);
  std::optional<JsonSchemaValidator> validator;
  try {
    validator = JsonSchemaValidator::compile(schema, std::string(kSourceName));
  } catch (const Error& e) {
    fuzz::fuzz_require(std::string_view(e.what()).find(kSourceName) != std::string_view::npos,
                       std::string("a refusal does not name the source: ") + e.what());
    return 0;
  }
  nlohmann::json instance;
  if (try_parse_json(instance_text, instance)) return 0;  // not JSON: nothing to validate
  const std::vector<JsonSchemaFailure> failures = validator->validate(instance);
  fuzz::fuzz_require(failures.size() <= kMaxJsonSchemaFailures, "too many failures listed");
  fuzz::fuzz_require(failures.empty() == validator->is_valid(instance),
                     "is_valid disagrees with validate");
  for (const JsonSchemaFailure& failure : failures) {
    fuzz::fuzz_require(!failure.message.empty(), "a failure without a message");
  }
  const GrammarSource source{
      .kind = GrammarSourceKind::JsonSchema, .name = std::string(kSourceName),
      .text = std::string(schema)};
  const OutputVerdict verdict = OutputCheck(source, nullptr).check(instance_text);
  fuzz::fuzz_require(verdict.is_valid == failures.empty(),
                     "the output check disagrees with the validator");
  return 0;
}
