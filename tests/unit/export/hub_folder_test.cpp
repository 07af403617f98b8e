// The Hub folder: its three files, JSONL records in column order with the values Parquet holds,
// the card's counts from the files written, refusing a folder in use, overwrite replacing only
// its own files, a number JSON cannot hold, determinism. hub_folder_check reads the folder with
// independent readers.
#include "engine/export/hub_folder.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <limits>
#include <string>

#include "engine/core/error.h"
#include "tests/support/test_paths.h"

namespace sluice {
namespace {

using Json = nlohmann::ordered_json;
namespace fs = std::filesystem;

HubDataset small_hub_dataset() {
  HubDataset dataset;
  dataset.columns = {{"prompt", ParquetType::String},
                     {"chosen", ParquetType::Messages},
                     {"score", ParquetType::Double}};
  dataset.rows = {
      Json::parse(R"({"score": 2, "prompt": "hi", "extra": 1,
                      "chosen": [{"role": "user", "content": "a"}, {"role": "assistant"}]})"),
      Json::parse(R"({"prompt": null})"),
  };
  dataset.card.pretty_name = "small";
  return dataset;
}

TEST(HubFolderTest, WritesJsonlParquetAndTheCardFromTheFiles) {
  const std::string dir = test::make_temp_dir("hub_folder") + "/out";
  const HubFolderStats stats = write_hub_folder(dir, small_hub_dataset());
  // Column order, nulls where a row has none, a Double as a double, messages as {content, role};
  // keys that are no column are not written.
  EXPECT_EQ(test::read_file(dir + "/data/train.jsonl"),
            "{\"prompt\":\"hi\",\"chosen\":[{\"content\":\"a\",\"role\":\"user\"},"
            "{\"content\":null,\"role\":\"assistant\"}],\"score\":2.0}\n"
            "{\"prompt\":null,\"chosen\":null,\"score\":null}\n");
  const std::string parquet = test::read_file(dir + "/data/train.parquet");
  const std::string card = test::read_file(dir + "/README.md");
  EXPECT_EQ(stats.num_rows, 2u);
  EXPECT_EQ(stats.parquet_bytes, parquet.size());
  EXPECT_EQ(stats.card_bytes, card.size());
  EXPECT_NE(card.find("    num_examples: 2\n"), std::string::npos) << card;
  EXPECT_NE(card.find("  download_size: " + std::to_string(parquet.size()) + "\n"),
            std::string::npos)
      << card;
  EXPECT_NE(card.find("  - name: \"chosen\"\n    list:\n"), std::string::npos) << card;
}

TEST(HubFolderTest, RefusesAFolderInUseUnlessOverwriteWhichKeepsOtherFiles) {
  const std::string dir = test::make_temp_dir("hub_folder_in_use");
  test::write_file(dir + "/notes.txt", "mine");
  try {
    write_hub_folder(dir, small_hub_dataset());
    FAIL() << "a folder with a file in it was used";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not empty"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir + "/README.md"));
  test::write_file(dir + "/README.md", "old card");
  HubDataset dataset = small_hub_dataset();
  dataset.options.overwrite = true;
  write_hub_folder(dir, dataset);
  EXPECT_EQ(test::read_file(dir + "/notes.txt"), "mine");
  EXPECT_NE(test::read_file(dir + "/README.md"), "old card");
  EXPECT_THROW(write_hub_folder(dir + "/notes.txt", dataset), Error);  // a file, not a folder
}

TEST(HubFolderTest, ANumberJsonCannotHoldIsAnErrorNamingRowAndColumn) {
  const std::string dir = test::make_temp_dir("hub_folder_nan") + "/out";
  HubFolderWriter writer(dir, {{"score", ParquetType::Double}});
  writer.add_row({{"score", 1.5}});
  try {
    writer.add_row({{"score", std::numeric_limits<double>::infinity()}});
    FAIL() << "infinity was written";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("row 1, column \"score\""), std::string::npos) << e.what();
  }
  const HubFolderStats stats = writer.finish({});
  EXPECT_EQ(stats.num_rows, 1u);
  EXPECT_EQ(test::read_file(dir + "/data/train.jsonl"), "{\"score\":1.5}\n");
}

TEST(HubFolderTest, TheSameRowsGiveTheSameBytes) {
  const std::string root = test::make_temp_dir("hub_folder_twice");
  write_hub_folder(root + "/a", small_hub_dataset());
  write_hub_folder(root + "/b", small_hub_dataset());
  for (const char* file : {"README.md", "data/train.jsonl", "data/train.parquet"})
    EXPECT_EQ(test::read_file(root + "/a/" + file), test::read_file(root + "/b/" + file)) << file;
}

}  // namespace
}  // namespace sluice
