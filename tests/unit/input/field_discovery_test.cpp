#include "engine/input/field_discovery.h"

#include <gtest/gtest.h>

#include "engine/input/field_value.h"
#include "tests/unit/input/dataset_test_util.h"

namespace sluice {
namespace {

using Json = nlohmann::ordered_json;
using test::shared_path;
using test::write_temp_file;

TEST(FieldDiscovery, AlpacaCountsMatchAnIndependentParse) {
  const std::string path = shared_path("datasets/en/alpaca_5000.json");
  const auto fields = discover_fields(path, DatasetFormat::Auto);
  ASSERT_EQ(fields.size(), 3u);
  EXPECT_EQ(fields[0].name, "instruction");
  EXPECT_EQ(fields[1].name, "input");
  EXPECT_EQ(fields[2].name, "output");
  const Json all = Json::parse(test::read_file(path));
  for (const FieldInfo& field : fields) {
    size_t num_non_empty = 0;
    for (size_t i = 0; i < 1000; ++i) {
      num_non_empty +=
          all[i][field.name].get<std::string>().find_first_not_of(" \t\r\n") != std::string::npos;
    }
    EXPECT_EQ(field.num_present, 1000u) << field.name;
    EXPECT_EQ(field.num_strings, 1000u) << field.name;
    EXPECT_EQ(field.num_non_empty, num_non_empty) << field.name;
  }
  EXPECT_EQ(fields[0].num_non_empty, 1000u);
  EXPECT_GT(fields[1].num_non_empty, 100u);  // Alpaca inputs are often empty
  EXPECT_LT(fields[1].num_non_empty, 900u);
  // The first instruction is 68 characters, so it is whole; the first input is the first row's.
  EXPECT_EQ(fields[0].example,
            "Are the two sentences below grammatically correct? Output yes or no.");
  EXPECT_EQ(fields[1].example,
            "Sentence 1: I am going to the store.\nSentence 2: I goes to the store.");
  const auto all_rows = discover_fields(path, DatasetFormat::Json, 100000);
  EXPECT_EQ(all_rows[0].num_present, 5000u);
}

TEST(FieldDiscovery, FirstSeenOrderMixedTypesAndBadRows) {
  const std::string path = write_temp_file("rows.jsonl",
                                           "{\"b\": \"\", \"a\": 1}\n"
                                           "not json\n"
                                           "{\"c\": [1, 2], \"b\": \"  \", \"a\": null}\n"
                                           "{\"b\": \"x\"}\n");
  const auto fields = discover_fields(path, DatasetFormat::Jsonl);
  ASSERT_EQ(fields.size(), 3u);
  EXPECT_EQ(fields[0].name, "b");
  EXPECT_EQ(fields[0].num_present, 3u);
  EXPECT_EQ(fields[0].num_non_empty, 1u);
  EXPECT_EQ(fields[0].num_strings, 3u);
  EXPECT_EQ(fields[0].example, "x");
  EXPECT_EQ(fields[1].name, "a");
  EXPECT_EQ(fields[1].num_present, 2u);
  EXPECT_EQ(fields[1].num_non_empty, 1u);
  EXPECT_EQ(fields[1].num_strings, 0u);
  EXPECT_EQ(fields[1].example, "1");
  EXPECT_EQ(fields[2].name, "c");
  EXPECT_EQ(fields[2].example, "[1,2]");
  // max_rows counts the bad row too: two rows read, one of them bad.
  const auto first_two = discover_fields(path, DatasetFormat::Jsonl, 2);
  ASSERT_EQ(first_two.size(), 2u);
  EXPECT_EQ(first_two[0].num_present, 1u);
}

TEST(FieldDiscovery, LongExamplesAreCutOnCharacterBoundaries) {
  std::string long_text;
  for (int i = 0; i < 100; ++i) long_text += "я";  // two bytes each
  const auto fields = discover_fields(write_temp_file("rows.csv", "text\n" + long_text + "\n"),
                                      DatasetFormat::Auto);
  ASSERT_EQ(fields.size(), 1u);
  std::string expected;
  for (int i = 0; i < 77; ++i) expected += "я";
  EXPECT_EQ(fields[0].example, expected + "...");
}

TEST(FieldDiscovery, ChatFilesShowTheirRecordKeys) {
  const auto fields = discover_fields(shared_path("datasets/chat/sharegpt_dummy_conversation.json"),
                                      DatasetFormat::Auto);
  ASSERT_EQ(fields.size(), 2u);
  EXPECT_EQ(fields[0].name, "id");
  EXPECT_EQ(fields[0].example, "identity_0");
  EXPECT_EQ(fields[1].name, "conversations");
  EXPECT_EQ(fields[1].num_present, 500u);
  EXPECT_EQ(fields[1].num_strings, 0u);
}

TEST(FieldValue, EmptinessAndText) {
  EXPECT_TRUE(is_empty_field_value(Json()));
  EXPECT_TRUE(is_empty_field_value(Json(" \n")));
  EXPECT_TRUE(is_empty_field_value(Json::array()));
  EXPECT_FALSE(is_empty_field_value(Json(0)));
  EXPECT_FALSE(is_empty_field_value(Json(false)));
  EXPECT_EQ(field_value_text(Json(2.5)), "2.5");
  EXPECT_EQ(field_value_text(Json("as is")), "as is");
  EXPECT_EQ(field_value_text(Json::parse(R"({"k": "v"})")), R"({"k":"v"})");
}

TEST(FieldDiscovery, RowsNestedTooDeeplyOrOutOfRangeAreSkipped) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  const std::string path =
      write_temp_file("deep.jsonl", "{\"prompt\": \"a\", \"meta\": " + deep +
                                        "}\n{\"n\": 1e400}\n{\"prompt\": \"b\"}\n");
  const auto fields = discover_fields(path, DatasetFormat::Auto);
  ASSERT_EQ(fields.size(), 1u);
  EXPECT_EQ(fields[0].name, "prompt");
  EXPECT_EQ(fields[0].num_present, 1u);
  EXPECT_EQ(fields[0].example, "b");
}

}  // namespace
}  // namespace sluice
