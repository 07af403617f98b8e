// The dataset card: YAML scalars escaped by hand-worked expectations, the whole header of a small
// card as the Hub reads it, size categories at their bounds, and the provenance section (the
// job file verbatim in a fence no backtick inside can close). hub_folder_check parses the header
// with an independent YAML parser (the yaml npm package).
#include "engine/export/dataset_card.h"

#include <gtest/gtest.h>

#include <string>

namespace sluice {
namespace {

using Json = nlohmann::ordered_json;

TEST(DatasetCardTest, YamlQuotedEscapesWhatYamlWouldReadOtherwise) {
  const std::string hostile =
      "a: b # \"q\" \\ \n\t\x01\x7F"
      "\xC2\x85"          // U+0085, a line break to YAML 1.1
      "\xE2\x80\xA8"      // U+2028
      "\xF0\x9F\x98\x80"  // U+1F600, printable: kept
      "\xFF";             // not UTF-8
  EXPECT_EQ(yaml_quoted(hostile),
            "\"a: b # \\\"q\\\" \\\\ \\n\\t\\x01\\x7F\\x85\\u2028\xF0\x9F\x98\x80\xEF\xBF\xBD\"");
  EXPECT_EQ(yaml_quoted(""), "\"\"");
  EXPECT_EQ(yaml_quoted("\xEF\xBB\xBF"), "\"\\uFEFF\"");
}

TEST(DatasetCardTest, HeaderHoldsWhatTheHubReads) {
  DatasetCard card;
  card.pretty_name = "Pairs: v1";
  card.license = "apache-2.0";
  card.task_categories = {"text-generation"};
  card.features = {{"prompt", ParquetType::String},
                   {"chosen", ParquetType::Messages},
                   {"score_chosen", ParquetType::Double},
                   {"n", ParquetType::Int64, false},
                   {"ok", ParquetType::Bool},
                   {"tags", ParquetType::StringList}};
  card.splits = {{"train", "data/train.parquet", 1234, 5000, 4321}};
  const std::string text = render_dataset_card(card);
  const std::string expected_header = R"(---
license: "apache-2.0"
pretty_name: "Pairs: v1"
tags:
- "synthetic"
- "sluice"
task_categories:
- "text-generation"
size_categories:
- "1K<n<10K"
configs:
- config_name: default
  data_files:
  - split: "train"
    path: "data/train.parquet"
dataset_info:
  features:
  - name: "prompt"
    dtype: string
  - name: "chosen"
    list:
    - name: content
      dtype: string
    - name: role
      dtype: string
  - name: "score_chosen"
    dtype: float64
  - name: "n"
    dtype: int64
  - name: "ok"
    dtype: bool
  - name: "tags"
    sequence: string
  splits:
  - name: "train"
    num_bytes: 5000
    num_examples: 1234
  download_size: 4321
  dataset_size: 5000
---
)";
  ASSERT_GE(text.size(), expected_header.size());
  EXPECT_EQ(text.substr(0, expected_header.size()), expected_header);
  EXPECT_NE(text.find("\n# Pairs: v1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("| `n` | int64, never null |  |"), std::string::npos) << text;
}

TEST(DatasetCardTest, SizeCategoriesAtTheirBounds) {
  EXPECT_EQ(hub_size_category(0), "n<1K");
  EXPECT_EQ(hub_size_category(999), "n<1K");
  EXPECT_EQ(hub_size_category(1000), "1K<n<10K");
  EXPECT_EQ(hub_size_category(9999), "1K<n<10K");
  EXPECT_EQ(hub_size_category(10000), "10K<n<100K");
  EXPECT_EQ(hub_size_category(2500000), "1M<n<10M");
  EXPECT_EQ(hub_size_category(999999999999), "100B<n<1T");
  EXPECT_EQ(hub_size_category(1000000000000), "n>1T");
}

TEST(DatasetCardTest, ProvenanceKeepsTheJobFileVerbatim) {
  const std::string job_file = "steps:\n- generate: {n: 4}\n# ``` a fence in a comment\n";
  Json provenance = {
      {"model", {{"file", "tiny.gguf"}, {"sha256", "ab12"}, {"quantization", "Q8_0"}}},
      {"seeds", {1, 2}},
      {"job_file", job_file},
      {"steps", {{{"step", "generate"}, {"rows", 8}}, {{"step", "dedup"}, {"rows", 7}}}}};
  const std::string markdown = render_provenance(provenance);
  const std::string expected =
      "- **model**:\n"
      "  - **file**: `tiny.gguf`\n"
      "  - **sha256**: `ab12`\n"
      "  - **quantization**: `Q8_0`\n"
      "- **seeds**: `1`, `2`\n"
      "\n### job\\_file\n\n````\n" +
      job_file +
      "````\n"
      "\n### steps\n\n| step | rows |\n|---|---|\n"
      "| `generate` | `8` |\n| `dedup` | `7` |\n";
  EXPECT_EQ(markdown, expected);

  DatasetCard card;
  card.pretty_name = "x";
  card.provenance = provenance;
  const std::string text = render_dataset_card(card);
  EXPECT_NE(text.find("\n## Provenance\n\n" + expected), std::string::npos) << text;
}

TEST(DatasetCardTest, NestedMultiLineTextGetsASectionOfItsOwn) {
  const Json provenance = {{"parameters", {{"top_p", 0.5}, {"chat_template", "{{ a }}\n{{ b }}"}}}};
  EXPECT_EQ(render_provenance(provenance),
            "- **parameters**:\n"
            "  - **top\\_p**: `0.5`\n"
            "  - **chat\\_template**: *(below)*\n"
            "\n### parameters.chat\\_template\n\n```\n{{ a }}\n{{ b }}\n```\n");
}

TEST(DatasetCardTest, ValuesInTablesAndCodeSpansCannotBreakOut) {
  Json provenance = {{"steps", {{{"note", "a|b"}}}}, {"template", "uses `x` here"}};
  const std::string markdown = render_provenance(provenance);
  EXPECT_NE(markdown.find("- **template**: ``uses `x` here``\n"), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("| `a\\|b` |"), std::string::npos) << markdown;
}

}  // namespace
}  // namespace sluice
