// Writes the two Hub folders that hub_folder_check.mjs reads with independent readers:
//   TRICKY_DIR  2,503 rows in 3 row groups of many pages: 2- to 4-byte UTF-8, empty strings,
//               nulls in every column that has them, a 100 kB string, invalid UTF-8, message
//               lists of 0, 1 and 3 entries (a null entry, a missing content), int64 extremes,
//               doubles from 5e-324 to 1e308, a column named with YAML and Markdown syntax, lists
//               that are never null, and a card whose pretty_name and provenance are hostile to
//               YAML
//   EMPTY_DIR   the same columns and no row
// Usage: hub_folder_fixture TRICKY_DIR EMPTY_DIR
#include <cstdint>
#include <exception>
#include <iostream>
#include <limits>
#include <string>

#include "engine/export/hub_folder.h"

namespace {

using Json = nlohmann::ordered_json;
using sluice::ParquetColumn;
using sluice::ParquetType;

// The card's pretty_name, also checked by hub_folder_check.mjs: ": ", "#", quotes, a newline,
// a tab, a control character, a 4-byte character.
const char* const kHostileName = "Tricky: \"pairs\" #1 'x'\nsecond\tline \x01 \xF0\x9F\x98\x80";

std::vector<ParquetColumn> fixture_columns() {
  return {{"prompt", ParquetType::String},           {"chosen", ParquetType::Messages},
          {"rejected", ParquetType::Messages},       {"score_chosen", ParquetType::Double},
          {"n", ParquetType::Int64, false},          {"ok", ParquetType::Bool},
          {"tags", ParquetType::StringList},         {"weird: name #1 | `x`", ParquetType::String},
          {"turns", ParquetType::Messages, false},  // never null: levels one lower
          {"labels", ParquetType::StringList, false}};
}

Json message(const char* role, const std::string& content) {
  return {{"content", content}, {"role", role}};
}

Json fixture_row(int64_t i) {
  static const std::string kTexts[] = {
      "",
      "plain ascii",
      "h\xC3\xA9llo \xE2\x80\x94 \xE4\xB8\xAD\xE6\x96\x87 \xF0\x9F\x98\x80 \xF0\x9D\x84\x9E",
      "quotes \" and \\ and\nnew lines\r\n\ttabs \x01 nul-free control",
      "bad \xFF byte \xC3",
  };
  static const int64_t kInts[] = {0,
                                  -1,
                                  1,
                                  std::numeric_limits<int64_t>::max(),
                                  std::numeric_limits<int64_t>::min(),
                                  (int64_t{1} << 53) + 1};
  static const double kDoubles[] = {0.1, -2.5, 1.0 / 3.0, 1e308, 5e-324, -0.0, 42.0};
  Json row = Json::object();
  if (i % 7 != 3) row["prompt"] = kTexts[i % 5] + " #" + std::to_string(i);
  if (i == 17) {
    // 100 kB: spans pages and carries 3- and 4-byte characters across it.
    std::string big;
    while (big.size() < 100000) big += "long \xE2\x82\xAC text \xF0\x9F\x8C\x8D ";
    row["prompt"] = big;
  }
  switch (i % 4) {
    case 0:
      row["chosen"] = Json::array();
      break;
    case 1:
      row["chosen"] = Json::array({message("user", kTexts[i % 5])});
      break;
    case 2:
      row["chosen"] = Json::array({message("system", ""), message("user", kTexts[2]),
                                   message("assistant", "answer " + std::to_string(i))});
      break;
    case 3:
      break;  // null
  }
  if (i % 6 == 0) {
    row["rejected"] = Json::array({nullptr, Json{{"role", "assistant"}}, message("user", "x")});
  } else if (i % 6 != 5) {
    row["rejected"] = Json::array({message("assistant", "no " + std::to_string(i))});
  }
  if (i % 9 != 4) row["score_chosen"] = kDoubles[i % 7];
  if (i % 9 == 8) row["score_chosen"] = i;  // an integer in a float64 column: a double both ways
  row["n"] = kInts[i % 6] == 0 ? i : kInts[i % 6];
  if (i % 3 != 2) row["ok"] = i % 2 == 0;
  switch (i % 5) {
    case 0:
      row["tags"] = Json::array();
      break;
    case 1:
      row["tags"] = Json::array({"a"});
      break;
    case 2:
      row["tags"] = Json::array({"a", nullptr, kTexts[2]});
      break;
    case 3:
      row["tags"] = nullptr;
      break;
    case 4:
      break;
  }
  row["weird: name #1 | `x`"] = i % 2 == 0 ? Json("w") : Json(nullptr);
  row["turns"] = i % 3 == 0   ? Json::array()
                 : i % 3 == 1 ? Json::array({message("user", "t"), nullptr, Json{{"role", "r"}}})
                              : Json::array({message("assistant", kTexts[i % 5])});
  row["labels"] = i % 2 == 0 ? Json::array() : Json::array({"l", nullptr, ""});
  return row;
}

sluice::DatasetCard fixture_card() {
  sluice::DatasetCard card;
  card.pretty_name = kHostileName;
  card.license = "cc-by-4.0";
  card.task_categories = {"text-generation"};
  card.description = "Rows made to trip a Parquet reader and a YAML parser.";
  card.provenance = {
      {"model", {{"file", "stories260K-f32.gguf"}, {"sha256", "00ff"}, {"quantization", "F32"}}},
      {"sampling", {{"temperature", 0.8}, {"top_p", 0.95}, {"seed", 7}}},
      {"sluice_version", "test"},
      {"job_file", "steps:\n  - generate: {n: 4}\n  # a \"hostile\": value ```\n"},
      {"steps", {{{"step", "generate"}, {"rows_in", 2503}, {"rows_out", 2503}}}}};
  return card;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: hub_folder_fixture TRICKY_DIR EMPTY_DIR\n";
    return 2;
  }
  try {
    sluice::HubFolderOptions options;
    options.parquet.rows_per_group = 1000;
    options.parquet.bytes_per_page = 4096;
    sluice::HubFolderWriter tricky(argv[1], fixture_columns(), options);
    for (int64_t i = 0; i < 2503; ++i) tricky.add_row(fixture_row(i));
    const sluice::HubFolderStats stats = tricky.finish(fixture_card());
    sluice::HubFolderWriter empty(argv[2], fixture_columns(), options);
    empty.finish(fixture_card());
    std::cout << "hub_folder_fixture: " << stats.num_rows << " rows in " << stats.num_row_groups
              << " row groups, " << stats.parquet_bytes << " Parquet bytes, " << stats.jsonl_bytes
              << " JSONL bytes\n";
  } catch (const std::exception& e) {
    std::cerr << "hub_folder_fixture: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
