// The YAML subset pipeline descriptions may be written in: a whole description reads as the JSON
// a person would write for it, and what it does not read is refused by line.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "app/pipeline/yaml_subset.h"
#include "engine/core/error.h"

namespace sluice {
namespace {

using Json = nlohmann::ordered_json;

TEST(YamlSubset, ADescriptionReadsAsItsJson) {
  const char* yaml = R"(# a DPO set
name: helpful-dpo
steps:
  - step: generate
    options:
      model: "models/m.gguf"   # quoted
      input: prompts.jsonl
      n: 4
      temperature: 0.8
      seed: -7
      stop: ["\n\n", '###', end]
      no-chat-template: true
  - step: judge
    rubric: ultrafeedback
    instructions: |
      Rate it.
        Be fair: 1 to 5.

    pairs:
      drop_ties: false
      min_margin: 1.5e0
  -
    step: dedup
    decontaminate: ~
  - step: export
    options: {}
    tags:
    - a b
    - 'it''s'
    url: http://127.0.0.1:8000/v1
)";
  const Json expected = {{"name", "helpful-dpo"},
                         {"steps",
                          {{{"step", "generate"},
                            {"options",
                             {{"model", "models/m.gguf"},
                              {"input", "prompts.jsonl"},
                              {"n", 4},
                              {"temperature", 0.8},
                              {"seed", -7},
                              {"stop", {"\n\n", "###", "end"}},
                              {"no-chat-template", true}}}},
                           {{"step", "judge"},
                            {"rubric", "ultrafeedback"},
                            {"instructions", "Rate it.\n  Be fair: 1 to 5.\n"},
                            {"pairs", {{"drop_ties", false}, {"min_margin", 1.5}}}},
                           {{"step", "dedup"}, {"decontaminate", nullptr}},
                           {{"step", "export"},
                            {"options", Json::object()},
                            {"tags", {"a b", "it's"}},
                            {"url", "http://127.0.0.1:8000/v1"}}}}};
  EXPECT_EQ(parse_yaml_subset(yaml, "p.yaml"), expected);
}

TEST(YamlSubset, WhatItDoesNotReadIsRefusedByLine) {
  auto error_of = [](const std::string& text) {
    try {
      parse_yaml_subset(text, "p.yaml");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(read)");
  };
  EXPECT_THAT(error_of("a: 1\nb: &x 2\n"), ::testing::HasSubstr("p.yaml:2: anchors"));
  EXPECT_THAT(error_of("a: 1\na: 2\n"),
              ::testing::HasSubstr("p.yaml:2: the key \"a\" appears twice"));
  EXPECT_THAT(error_of("a:\n\t- 1\n"), ::testing::HasSubstr("p.yaml:2: a tab"));
  EXPECT_THAT(error_of("a: {b: 1}\n"), ::testing::HasSubstr("p.yaml:1: flow mappings"));
  EXPECT_THAT(error_of("a: \"open\n"), ::testing::HasSubstr("p.yaml:1: a quoted value"));
  EXPECT_THAT(error_of("a: 1\n--- \nb: 2\n"), ::testing::HasSubstr("one document"));
  EXPECT_THAT(error_of("a: 1\n  b: 2\n"), ::testing::HasSubstr("p.yaml:2: unexpected indentation"));
  EXPECT_THAT(error_of("just text\n"), ::testing::HasSubstr("p.yaml:1: expected \"key: value\""));
  EXPECT_THAT(error_of(""), ::testing::HasSubstr("p.yaml: empty"));
  std::string deep;
  for (int i = 0; i < 100; ++i) deep += std::string(static_cast<size_t>(2 * i), ' ') + "k:\n";
  EXPECT_THAT(error_of(deep), ::testing::HasSubstr("deeper than 64"));
}

}  // namespace
}  // namespace sluice
