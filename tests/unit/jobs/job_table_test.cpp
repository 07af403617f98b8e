#include "engine/jobs/job_table.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <functional>
#include <iostream>
#include <limits>
#include <thread>

#include "engine/core/error.h"
#include "engine/jobs/job_store.h"
#include "engine/tokenizer/unicode.h"
#include "tests/support/test_paths.h"
#include "tests/unit/jobs/job_test_rows.h"

namespace sluice {
namespace {

using test::make_job_info;
using test::make_sample;

// The brief's 100k rows in a release build; 20k in the sanitizer build, where each of the dozen
// tests (a process each) spent 25 s building the job. Every marker below still has rows in 20k.
#if defined(__SANITIZE_ADDRESS__)
constexpr int64_t kNumRows = 20'000;
#else
constexpr int64_t kNumRows = 100'000;
#endif

// ---- the 100k-row job: every value is a formula of the row index, so the tests compute what a
// view must hold from the formulas, never from JobTable.

RowStatus status_of(int64_t i) {
  if (i % 10 == 3) return RowStatus::Failed;
  if (i % 25 == 7) return RowStatus::Skipped;  // never also i % 10 == 3
  return RowStatus::Done;
}

bool has_marker_in_output(int64_t i) {
  return status_of(i) == RowStatus::Done && i % 1000 == 123;
}
bool has_marker_in_prompt(int64_t i) {
  return status_of(i) != RowStatus::Skipped && i % 4999 == 17;
}
// Rows with a second sample, whose output alone holds "Quokka says \"hi\"".
bool has_second_sample(int64_t i) {
  return status_of(i) == RowStatus::Done && i % 500 == 250;
}
int output_tokens_of(int64_t i) {
  return 5 + static_cast<int>((i * 37) % 120);
}
int prompt_tokens_of(int64_t i) {
  return 10 + static_cast<int>((i * 13) % 50);
}
double total_ms_of(int64_t i) {
  return 10.0 + static_cast<double>((i * 7919) % 1000) * 0.5;
}
const char* finish_reason_of(int64_t i) {
  return i % 3 == 0 ? "length" : "stop";
}

std::string words(int64_t i, int num_words) {
  static const char* const kWords[] = {"river",  "stone",  "lantern", "orbit",  "maple",
                                       "copper", "signal", "harbor",  "velvet", "ember"};
  std::string text;
  for (int w = 0; w < num_words; ++w) text += str_cat(w == 0 ? "" : " ", kWords[(i + w * 7) % 10]);
  return text;
}

std::string prompt_of(int64_t i) {
  std::string prompt = str_cat("<s>[INST] Write about topic ", i % 97, " (row ", i, "): ");
  if (has_marker_in_prompt(i)) prompt += "the ZEBRAmarker appears here. ";
  return prompt + words(i, 12) + " [/INST]";
}

RowResult make_table_row(int64_t i) {
  RowResult row;
  row.row_index = i;
  row.line = static_cast<size_t>(i) + 1;
  row.status = status_of(i);
  row.seed = static_cast<uint64_t>(i) * 2654435761ULL;
  if (row.status == RowStatus::Skipped) {
    row.error = str_cat("line ", i + 1, ": not a JSON object");
    return row;
  }
  row.input = {{"instruction", str_cat("topic ", i % 97)}};
  if (i % 7 != 0) row.input["id"] = str_cat("item-", i);
  row.messages = {{"user", str_cat("topic ", i % 97)}};
  row.prompt = prompt_of(i);
  row.prompt_tokens = prompt_tokens_of(i);
  row.queue_ms = 1.0;
  row.ttft_ms = 5.0;
  row.total_ms = total_ms_of(i);
  if (row.status == RowStatus::Failed) {
    row.error = str_cat("prompt is ", 5000 + i, " tokens, longer than max_model_len 4096");
    return row;
  }
  std::string output = words(i, output_tokens_of(i) / 2);
  if (i % 13 == 0) output += " ünïcödé 日本 🙂";
  if (has_marker_in_output(i)) output += " a zebraMarker at the end";
  SampleResult sample = make_sample(output, output_tokens_of(i), finish_reason_of(i));
  sample.output_token_ids = {1, 2, 3};
  row.samples = {sample};
  if (has_second_sample(i)) row.samples.push_back(make_sample("Quokka says \"hi\"", 4));
  return row;
}

std::vector<int64_t> expected_indices(const std::function<bool(int64_t)>& keep) {
  std::vector<int64_t> indices;
  for (int64_t i = 0; i < kNumRows; ++i) {
    if (keep(i)) indices.push_back(i);
  }
  return indices;
}

template <typename Fn>
double elapsed_ms(Fn&& fn) {
  const auto start = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

class JobTableLarge : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = test::make_temp_dir("job-table");
    path_ = dir_ + "/large.sluicejob";
    const double build_ms = elapsed_ms([] {
      auto store = JobStore::create(path_, make_job_info());
      for (int64_t i = 0; i < kNumRows; ++i) store->add_result(make_table_row(i));
      store->flush();
    });
    std::cout << "[ timing ] built " << kNumRows << " rows (" << std::filesystem::file_size(path_)
              << " bytes) in " << build_ms << " ms\n";
  }
  static void TearDownTestSuite() { std::filesystem::remove_all(dir_); }

  void SetUp() override { table_ = JobTable::open(path_); }

  static std::string dir_;
  static std::string path_;
  std::unique_ptr<JobTable> table_;
};

std::string JobTableLarge::dir_;
std::string JobTableLarge::path_;

JobTableQuery search_for(std::string text) {
  JobTableQuery query;
  query.search = std::move(text);
  return query;
}

TEST_F(JobTableLarge, CountsByStatus) {
  int64_t expected[4] = {0, 0, 0, 0};
  for (int64_t i = 0; i < kNumRows; ++i) ++expected[static_cast<int>(status_of(i))];
  EXPECT_EQ(table_->count({}), kNumRows);
  for (const RowStatus status : {RowStatus::Done, RowStatus::Failed, RowStatus::Skipped}) {
    JobTableQuery query;
    query.status = status;
    EXPECT_EQ(table_->count(query), expected[static_cast<int>(status)]) << to_string(status);
  }
}

TEST_F(JobTableLarge, SearchHitsKnownRows) {
  const auto marked = expected_indices(
      [](int64_t i) { return has_marker_in_output(i) || has_marker_in_prompt(i); });
  ASSERT_FALSE(marked.empty());
  // ASCII letters match in any case.
  for (const char* text : {"zebramarker", "ZEBRAMARKER", "ZebraMarker"}) {
    EXPECT_EQ(table_->row_indices(search_for(text)), marked) << text;
    EXPECT_EQ(table_->count(search_for(text)), static_cast<int64_t>(marked.size())) << text;
  }
  // A later sample's output counts, and a needle that JSON escapes still matches.
  const auto quokka = expected_indices(has_second_sample);
  EXPECT_EQ(table_->row_indices(search_for("quokka says \"HI\"")), quokka);
  // The error text is searched.
  EXPECT_EQ(table_->row_indices(search_for("is 5123 TOKENS")), std::vector<int64_t>{123});
  // Non-ASCII text matches byte for byte.
  const auto unicode =
      expected_indices([](int64_t i) { return status_of(i) == RowStatus::Done && i % 13 == 0; });
  EXPECT_EQ(table_->row_indices(search_for("日本 🙂")), unicode);
}

TEST_F(JobTableLarge, SearchIgnoresTheSamplesJsonKeysAndNumbers) {
  EXPECT_EQ(table_->count(search_for("finish_reason")), 0);
  EXPECT_EQ(table_->count(search_for("output_token_ids")), 0);
  EXPECT_EQ(table_->count(search_for("length")), 0);  // a finish reason, in no text
  EXPECT_EQ(table_->count(search_for("[1,2,3]")), 0);
}

TEST_F(JobTableLarge, SearchCombinesWithStatus) {
  JobTableQuery query = search_for("zebramarker");
  query.status = RowStatus::Failed;
  const auto expected = expected_indices(
      [](int64_t i) { return status_of(i) == RowStatus::Failed && has_marker_in_prompt(i); });
  EXPECT_EQ(table_->row_indices(query), expected);
}

// Expects indices to be every row in ascending order of key, ties by row index.
template <typename Key>
void expect_sorted(const std::vector<int64_t>& indices, Key key) {
  ASSERT_EQ(indices.size(), static_cast<size_t>(kNumRows));
  for (size_t k = 1; k < indices.size(); ++k) {
    const auto a = std::pair{key(indices[k - 1]), indices[k - 1]};
    const auto b = std::pair{key(indices[k]), indices[k]};
    ASSERT_LT(a, b) << "at position " << k;
  }
}

TEST_F(JobTableLarge, SortOrders) {
  JobTableQuery query;
  query.sort_column = JobTableColumn::OutputTokens;
  // Rows without samples have no output tokens: they sort first (SQL NULL).
  expect_sorted(table_->row_indices(query), [](int64_t i) {
    return status_of(i) == RowStatus::Done ? output_tokens_of(i) : -1;
  });
  query.sort_column = JobTableColumn::Status;
  expect_sorted(table_->row_indices(query),
                [](int64_t i) { return std::string(to_string(status_of(i))); });
  query.sort_column = JobTableColumn::TotalMs;
  expect_sorted(table_->row_indices(query), [](int64_t i) {
    return status_of(i) == RowStatus::Skipped ? 0.0 : total_ms_of(i);
  });
  query.sort_column = JobTableColumn::FinishReason;
  expect_sorted(table_->row_indices(query), [](int64_t i) {
    return status_of(i) == RowStatus::Done ? std::string(finish_reason_of(i)) : std::string();
  });
  query.sort_column = JobTableColumn::PromptTokens;
  expect_sorted(table_->row_indices(query), [](int64_t i) {
    return status_of(i) == RowStatus::Skipped ? 0 : prompt_tokens_of(i);
  });
}

TEST_F(JobTableLarge, DescendingIsTheReverseOfAscending) {
  for (const JobTableColumn column :
       {JobTableColumn::RowIndex, JobTableColumn::Id, JobTableColumn::Prompt,
        JobTableColumn::Output, JobTableColumn::OutputTokens}) {
    JobTableQuery query;
    query.sort_column = column;
    auto ascending = table_->row_indices(query);
    query.is_descending = true;
    const auto descending = table_->row_indices(query);
    ASSERT_EQ(ascending.size(), static_cast<size_t>(kNumRows));
    std::reverse(ascending.begin(), ascending.end());
    EXPECT_EQ(descending, ascending) << static_cast<int>(column);
  }
}

TEST_F(JobTableLarge, PagesFollowTheViewToItsEnd) {
  JobTableQuery query;
  query.status = RowStatus::Done;
  query.sort_column = JobTableColumn::OutputTokens;
  query.is_descending = true;
  const auto all = table_->row_indices(query);
  const auto total = static_cast<int64_t>(all.size());
  ASSERT_EQ(table_->count(query), total);
  const auto indices_of = [](const std::vector<RowSummary>& page) {
    std::vector<int64_t> indices;
    for (const RowSummary& row : page) indices.push_back(row.row_index);
    return indices;
  };
  for (const int64_t offset : {int64_t{0}, int64_t{200}, total / 2, total - 200}) {
    const auto page = table_->rows(query, offset, 200);
    const std::vector<int64_t> expected(all.begin() + offset, all.begin() + offset + 200);
    EXPECT_EQ(indices_of(page), expected) << "offset " << offset;
  }
  EXPECT_EQ(table_->rows(query, total - 5, 200).size(), 5u);
  EXPECT_TRUE(table_->rows(query, total, 200).empty());
  EXPECT_TRUE(table_->rows(query, total + 1000, 200).empty());
  EXPECT_TRUE(table_->rows(query, 0, 0).empty());
  EXPECT_THROW(table_->rows(query, -1, 10), Error);
}

TEST_F(JobTableLarge, RowIndicesFromReadsTheTail) {
  const auto tail = table_->row_indices_from(kNumRows - 300);
  EXPECT_EQ(tail, expected_indices([](int64_t i) { return i >= kNumRows - 300; }));
  EXPECT_TRUE(table_->row_indices_from(kNumRows).empty());
  EXPECT_EQ(table_->row_indices_from(-5).size(), static_cast<size_t>(kNumRows));
}

TEST_F(JobTableLarge, SummariesHoldTheStoredValues) {
  // 250: two samples; 123: failed; 7: skipped; 91: no id (91 % 7 == 0); 26: Unicode.
  const auto summaries = table_->summaries({250, 123, 7, 91, 26, kNumRows + 5});
  ASSERT_EQ(summaries.size(), 5u);  // the row past the end is left out
  const RowSummary& two = summaries[0];
  EXPECT_EQ(two.row_index, 250);
  EXPECT_EQ(two.status, RowStatus::Done);
  EXPECT_EQ(two.id, "item-250");
  EXPECT_EQ(two.prompt_head, prompt_of(250));
  EXPECT_EQ(two.output_head, make_table_row(250).samples[0].output);
  EXPECT_EQ(two.num_samples, 2);
  EXPECT_EQ(two.prompt_tokens, prompt_tokens_of(250));
  EXPECT_EQ(two.output_tokens, output_tokens_of(250));
  EXPECT_EQ(two.sample_output_tokens, (std::vector<int>{output_tokens_of(250), 4}));
  EXPECT_EQ(two.finish_reason, finish_reason_of(250));
  EXPECT_DOUBLE_EQ(two.total_ms, total_ms_of(250));
  const RowSummary& failed = summaries[1];
  EXPECT_EQ(failed.status, RowStatus::Failed);
  EXPECT_EQ(failed.error_head, "prompt is 5123 tokens, longer than max_model_len 4096");
  EXPECT_EQ(failed.output_head, "");
  EXPECT_EQ(failed.num_samples, 0);
  EXPECT_EQ(failed.output_tokens, 0);
  EXPECT_TRUE(failed.sample_output_tokens.empty());
  EXPECT_EQ(failed.finish_reason, "");
  EXPECT_EQ(summaries[2].status, RowStatus::Skipped);
  EXPECT_EQ(summaries[2].id, "7");
  EXPECT_EQ(summaries[3].id, "91");
  EXPECT_EQ(summaries[4].output_head, make_table_row(26).samples[0].output);
}

TEST_F(JobTableLarge, RowGivesBackTheWholeResult) {
  for (const int64_t i : {int64_t{0}, int64_t{123}, int64_t{250}, kNumRows - 1})
    EXPECT_EQ(table_->row(i), make_table_row(i)) << "row " << i;
  EXPECT_EQ(table_->row(kNumRows), std::nullopt);
}

// The brief: count + first page of a search over 100k rows well under 100 ms.
TEST_F(JobTableLarge, QueriesAreFastOnAHundredThousandRows) {
  struct Case {
    const char* name;
    JobTableQuery query;
  };
  JobTableQuery by_tokens;
  by_tokens.sort_column = JobTableColumn::OutputTokens;
  JobTableQuery failed_search = search_for("zebramarker");
  failed_search.status = RowStatus::Failed;
  JobTableQuery common_sorted = search_for("lantern");
  common_sorted.sort_column = JobTableColumn::TotalMs;
  JobTableQuery by_validity;
  by_validity.sort_column = JobTableColumn::Valid;
  JobTableQuery invalid_only;
  invalid_only.validity = RowValidity::Invalid;
  const Case cases[] = {
      {"no filter", {}},
      {"search rare", search_for("zebramarker")},
      {"search common, by time", common_sorted},
      {"search json key", search_for("output")},
      {"failed + search", failed_search},
      {"by output tokens", by_tokens},
      {"by validity", by_validity},
      {"invalid only", invalid_only},
  };
  for (const Case& c : cases) {
    table_->row_indices(c.query);  // warms the OS cache, as a table in use would have it
    // Fresh tables: each one's first call scans the job (a table keeps its last view).
    const auto first = JobTable::open(path_);
    int64_t count = 0;
    const double count_ms = elapsed_ms([&] { count = first->count(c.query); });
    const double page_ms = elapsed_ms([&] { first->rows(c.query, 0, 200); });
    const auto second = JobTable::open(path_);
    const double page_alone_ms = elapsed_ms([&] { second->rows(c.query, 200, 200); });
    std::cout << "[ timing ] " << c.name << ": " << count << " rows; count " << count_ms
              << " ms + first page " << page_ms << " ms; a page alone " << page_alone_ms << " ms\n";
    // Generous for a loaded machine or a sanitizer build; the brief's target (well under
    // 100 ms) is for the printed figures on an idle release build.
    EXPECT_LT(count_ms + page_ms, 2000.0) << c.name;
  }
}

// ---- small jobs

std::string small_job_path(const std::string& name) {
  return test::make_temp_dir("job-table-small") + "/" + name + ".sluicejob";
}

TEST(JobTable, HeadsAreCutOnCharactersAndValidUtf8) {
  const std::string path = small_job_path("utf8");
  std::string long_text;
  for (int i = 0; i < 150; ++i) long_text += "日🙂";  // 3- and 4-byte characters
  {
    auto store = JobStore::create(path, make_job_info());
    RowResult row = test::make_row(0);
    row.prompt = long_text;
    row.samples[0].output = long_text;
    store->add_result(row);
    RowResult bad = test::make_row(1);
    bad.prompt = "abc\xff\xfe def";  // the prompt column is stored as given
    store->add_result(bad);
    store->flush();
  }
  const auto table = JobTable::open(path);
  const auto rows = table->rows({}, 0, 10);
  ASSERT_EQ(rows.size(), 2u);
  std::string expected_head;
  for (int i = 0; i < 100; ++i) expected_head += "日🙂";
  expected_head += "\u2026";
  EXPECT_EQ(rows[0].prompt_head, expected_head);
  EXPECT_EQ(rows[0].output_head, expected_head);
  EXPECT_TRUE(is_valid_utf8(rows[1].prompt_head));
  EXPECT_EQ(rows[1].prompt_head, "abc\uFFFD\uFFFD def");
}

TEST(JobTable, SortKeysComeFromTheFirstSampleOnly) {
  const std::string path = small_job_path("sample0");
  {
    auto store = JobStore::create(path, make_job_info(2));
    RowResult plain = test::make_row(0);
    plain.samples = {make_sample("c plain", 5, "stop")};
    // Escaped quotes that spell a key, and a newline: the JSON walk must not be fooled.
    RowResult tricky = test::make_row(1);
    tricky.samples = {
        make_sample("a \"output_tokens\": 1000,\n\"finish_reason\": \"x\"", 7, "length")};
    RowResult two = test::make_row(2);
    two.samples = {make_sample("b", 3, "stop"), make_sample("0 first in order", 1, "abort")};
    store->add_result(plain);
    store->add_result(tricky);
    store->add_result(two);
    store->add_result(test::make_failed_row(3));  // no samples: sorts first
  }
  const auto table = JobTable::open(path);
  JobTableQuery query;
  query.sort_column = JobTableColumn::OutputTokens;
  EXPECT_EQ(table->row_indices(query), (std::vector<int64_t>{3, 2, 0, 1}));
  query.sort_column = JobTableColumn::Output;
  EXPECT_EQ(table->row_indices(query), (std::vector<int64_t>{3, 1, 2, 0}));
  query.sort_column = JobTableColumn::FinishReason;
  EXPECT_EQ(table->row_indices(query), (std::vector<int64_t>{3, 1, 0, 2}));
  // The search finds key names only where an output spells them.
  EXPECT_EQ(table->row_indices(search_for("finish_reason")), std::vector<int64_t>{1});
  EXPECT_EQ(table->row_indices(search_for("OUTPUT_TOKENS\": 1000,\n")), std::vector<int64_t>{1});
  EXPECT_EQ(table->row_indices(search_for("0 FIRST")), std::vector<int64_t>{2});  // sample 2
}

TEST(JobTable, LongestOutputSortsByEverySampleAndSummariesListThem) {
  const std::string path = small_job_path("longest");
  {
    auto store = JobStore::create(path, make_job_info(2));
    RowResult second_longer = test::make_row(0);
    second_longer.samples = {make_sample("a", 2, "stop"), make_sample("b", 9, "length")};
    RowResult one = test::make_row(1);
    // An output spelling the key: the walk must read the sample's own value.
    one.samples = {make_sample("\"output_tokens\": 1000", 5, "stop")};
    store->add_result(second_longer);
    store->add_result(one);
    store->add_result(test::make_failed_row(2));  // no samples: sorts first
  }
  const auto table = JobTable::open(path);
  JobTableQuery query;
  query.sort_column = JobTableColumn::LongestOutputTokens;
  EXPECT_EQ(table->row_indices(query), (std::vector<int64_t>{2, 1, 0}));
  query.sort_column = JobTableColumn::OutputTokens;  // sample 0's: 2 before 5
  EXPECT_EQ(table->row_indices(query), (std::vector<int64_t>{2, 0, 1}));
  const auto summaries = table->summaries({0, 1, 2});
  ASSERT_EQ(summaries.size(), 3u);
  EXPECT_EQ(summaries[0].sample_output_tokens, (std::vector<int>{2, 9}));
  EXPECT_EQ(summaries[1].sample_output_tokens, std::vector<int>{5});
  EXPECT_TRUE(summaries[2].sample_output_tokens.empty());
}

TEST(JobTable, MissingTimingReadsAsNaN) {
  const std::string path = small_job_path("nan");
  {
    auto store = JobStore::create(path, make_job_info());
    RowResult row = test::make_row(0);
    row.total_ms = std::numeric_limits<double>::quiet_NaN();
    store->add_result(row);
  }
  const auto rows = JobTable::open(path)->rows({}, 0, 1);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_TRUE(std::isnan(rows[0].total_ms));
}

TEST(JobTable, OpenNamesAMissingOrForeignFile) {
  const std::string dir = test::make_temp_dir("job-table-open");
  try {
    JobTable::open(dir + "/missing.sluicejob");
    ADD_FAILURE() << "expected Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("missing.sluicejob: no such job file"), std::string::npos);
  }
  test::write_file(dir + "/text.sluicejob", "not a database at all, just some text\n");
  EXPECT_THROW(JobTable::open(dir + "/text.sluicejob"), Error);
}

TEST(JobTable, ReadsWhileAStoreKeepsCommitting) {
  const std::string path = small_job_path("live");
  auto store = JobStore::create(path, make_job_info());
  const auto table = JobTable::open(path);
  const int64_t first_version = table->data_version();
  EXPECT_EQ(table->data_version(), first_version);  // nothing committed: unchanged
  EXPECT_EQ(table->count({}), 0);

  constexpr int64_t kNumLiveRows = 3000;
  std::atomic<bool> is_writing{true};
  std::thread writer([&] {
    for (int64_t i = 0; i < kNumLiveRows; ++i) {
      store->add_result(make_table_row(i));
      if (i % 100 == 99) {
        store->flush();
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
    }
    store->flush();
    is_writing = false;
  });
  int64_t last_count = 0;
  int64_t last_version = first_version;
  int num_version_changes = 0;
  while (is_writing || last_count < kNumLiveRows) {
    const int64_t version = table->data_version();
    if (version == last_version) {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      continue;
    }
    ++num_version_changes;
    last_version = version;
    const int64_t count = table->count({});
    EXPECT_GE(count, last_count);  // rows only ever appear
    const auto page = table->rows({}, std::max<int64_t>(0, count - 3), 3);
    if (count > 0) {
      ASSERT_FALSE(page.empty());
      EXPECT_EQ(page.back().row_index, count - 1);  // written in order: no gap
      EXPECT_EQ(table->row(page.back().row_index), make_table_row(page.back().row_index));
    }
    last_count = count;
  }
  writer.join();
  EXPECT_GE(num_version_changes, 2);
  EXPECT_EQ(table->count({}), kNumLiveRows);
  const int64_t settled_version = table->data_version();
  EXPECT_EQ(table->data_version(), settled_version);  // the writer has stopped
}

}  // namespace
}  // namespace sluice
