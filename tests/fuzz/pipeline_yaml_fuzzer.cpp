// Feeds a pipeline description written in YAML (a person's file, app/pipeline/yaml_subset) to its
// reader. Properties: it returns JSON or refuses with a sluice::Error whose message names the
// file; it never recurses past its depth limit or hangs; the JSON it returns dumps and parses
// back to itself (no invalid strings kept unrepaired).
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "app/pipeline/yaml_subset.h"
#include "engine/core/error.h"
#include "tests/fuzz/fuzz_check.h"

using namespace sluice;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  nlohmann::ordered_json value;
  try {
    value = parse_yaml_subset(text, "p.yaml");
  } catch (const Error& error) {
    fuzz::fuzz_require(std::string_view(error.what()).rfind("p.yaml", 0) == 0,
                       "a refusal that does not name the file");
    return 0;
  }
  const std::string dumped = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  const auto back = nlohmann::ordered_json::parse(dumped, nullptr, false);
  fuzz::fuzz_require(!back.is_discarded(), "the JSON read does not parse back");
  return 0;
}
