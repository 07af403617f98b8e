// Soundness by random walks: for each schema of the JSONSchemaBench sample and the
// JSON-Schema-Test-Suite sample that compiles, random walks through the grammar's next-byte
// masks (each byte drawn among those allowed, ending where the grammar allows it) must write
// JSON that the full validator accepts: no value the grammar writes is invalid. (Found the
// oneOf, nullable, repeated-key and regex line-terminator gaps the compiler now closes.)
#include <gtest/gtest.h>

#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/grammar/compiled_grammar.h"
#include "engine/grammar/grammar_matcher.h"
#include "engine/grammar/json_schema_grammar.h"
#include "engine/grammar/json_schema_validator.h"
#include "tests/support/test_paths.h"
#include "tests/unit/grammar/grammar_test_support.h"

namespace sluice {
namespace {

using json = nlohmann::json;

// Every *.json file under dir, sorted.
std::vector<std::string> walk_schema_files(const std::string& dir) {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    if (entry.is_regular_file() && entry.path().extension() == ".json")
      files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

struct WalkCounts {
  size_t num_schemas = 0;
  size_t num_walks = 0;
  std::vector<std::string> invalid;
};

// A text the grammar writes, drawing each byte among those its mask allows; nullopt when the
// walk runs past max_bytes without the grammar allowing an end.
std::optional<std::string> random_walk(const std::shared_ptr<const CompiledGrammar>& compiled,
                                       std::mt19937& rng, size_t max_bytes) {
  GrammarMatcher matcher(compiled);
  const int32_t stop_id = 256;
  std::vector<uint32_t> mask(compiled->vocabulary().num_mask_words());
  std::string text;
  while (text.size() < max_bytes) {
    std::fill(mask.begin(), mask.end(), 0);
    matcher.fill_next_token_mask(mask);
    std::vector<int32_t> allowed;
    for (int32_t id = 0; id <= stop_id; ++id) {
      if ((mask[id / 32] >> (id % 32)) & 1) allowed.push_back(id);
    }
    if (allowed.empty()) return std::nullopt;
    const bool can_end = allowed.back() == stop_id;
    // Past a third of the budget, end as soon as allowed and prefer closing a value.
    if (can_end && (text.size() > max_bytes / 3 || rng() % 3 == 0)) return text;
    int32_t pick = allowed[rng() % allowed.size()];
    if (text.size() > max_bytes / 3) {
      for (int32_t id : allowed) {
        if (id == '}' || id == ']' || id == '"') pick = id;
      }
    }
    if (pick == stop_id) return text;
    if (!matcher.accept_token(pick)) return std::nullopt;
    text += static_cast<char>(pick);
  }
  return std::nullopt;
}

void walk_schema(const json& schema, const std::string& name, JsonWhitespace whitespace,
                 std::mt19937& rng, WalkCounts& counts) {
  std::optional<Grammar> grammar;
  try {
    grammar = json_schema_grammar(schema.dump(), name, {.whitespace = whitespace});
  } catch (const Error&) {
    return;  // refused: nothing is written
  }
  const JsonSchemaValidator validator = JsonSchemaValidator::compile(schema.dump(), name);
  const auto compiled =
      std::make_shared<const CompiledGrammar>(std::move(*grammar), test::byte_vocabulary());
  ++counts.num_schemas;
  for (int walk = 0; walk < 6; ++walk) {
    const auto text = random_walk(compiled, rng, 600);
    if (!text) continue;
    ++counts.num_walks;
    json value;
    try {
      value = json::parse(*text);
    } catch (const json::exception& e) {
      counts.invalid.push_back(name + ": not JSON: " + *text);
      continue;
    }
    const auto failures = validator.validate(value);
    if (!failures.empty()) {
      counts.invalid.push_back(name + ": " + *text + ": " +
                               describe_json_schema_failure(failures[0]));
    }
  }
}

TEST(JsonSchemaWalk, EveryValueWrittenIsValid) {
  std::mt19937 rng(20261130);
  WalkCounts counts;
  for (const JsonWhitespace whitespace : {JsonWhitespace::Compact, JsonWhitespace::Flexible}) {
    const std::string bench = test::source_dir() + "/tests/data/jsonschemabench-sample";
    for (const std::string& file : walk_schema_files(bench)) {
      walk_schema(json::parse(test::read_file(file)).at("schema"), file, whitespace, rng, counts);
    }
    const std::string suite =
        test::source_dir() + "/tests/data/json-schema-test-suite/draft2020-12";
    for (const std::string& file : walk_schema_files(suite)) {
      const json groups = json::parse(test::read_file(file));
      for (size_t i = 0; i < groups.size(); ++i) {
        walk_schema(groups[i].at("schema"), file + " #" + std::to_string(i), whitespace, rng,
                    counts);
      }
    }
  }
  std::cout << counts.num_schemas << " grammars, " << counts.num_walks << " complete walks\n";
  for (const std::string& line : counts.invalid) ADD_FAILURE() << line;
  EXPECT_GT(counts.num_schemas, 400U);
  EXPECT_GT(counts.num_walks, 2000U);
}

}  // namespace
}  // namespace sluice
