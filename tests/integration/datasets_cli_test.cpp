// `sluice generate` over the instruction files users bring, with prompt options, bad rows,
// exports and the `sluice jobs` commands.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/jobs/job_store.h"
#include "tests/integration/cli_test_util.h"

namespace sluice::test {
namespace {

using ::testing::HasSubstr;

ProcessResult generate(std::vector<std::string> extra) {
  std::vector<std::string> args = {"generate",     "--model", shared_path(kGgufF32),
                                   "--max-tokens", "8",       "--quiet"};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_sluice(args);
}

TEST(DatasetsCli, EveryShapeOfInstructionFileRuns) {
  struct Case {
    const char* file;
    size_t limit;
    const char* format;  // the format detection must find
  };
  for (const Case& c : {Case{"datasets/en/alpaca_5000.json", 6, "json"},
                        Case{"datasets/en/self_instruct_seed_tasks.jsonl", 5, "jsonl"},
                        Case{"datasets/ru/ru_gen100.jsonl", 4, "jsonl"},
                        Case{"datasets/chat/sharegpt_dummy_conversation.json", 5, "sharegpt"},
                        Case{"datasets/chat/openai_toy_chat_fine_tuning.jsonl", 5, "openai"}}) {
    SCOPED_TRACE(c.file);
    const std::string dir = make_temp_dir("datasets");
    const auto r = generate({"--input", shared_path(c.file), "--limit", std::to_string(c.limit), "--job",
                             dir + "/j.sluicejob", "--output", dir + "/out.jsonl"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto rows = read_jsonl(dir + "/out.jsonl");
    EXPECT_EQ(rows.size(), c.limit);
    for (const auto& row : rows) EXPECT_EQ(row["output_tokens"], 8);
    EXPECT_EQ(JobStore::open(dir + "/j.sluicejob")->info().source_format, c.format);
  }
}

TEST(DatasetsCli, CsvWithAColumnTemplateAndSystemPrompt) {
  const std::string dir = make_temp_dir("csv");
  write_file(dir + "/in.csv", "topic,detail\n\"a cat\",\"who, quietly, sleeps\"\ndog,\n");
  const auto r = generate({"--input", dir + "/in.csv", "--output", dir + "/out.jsonl", "--prompt-template",
                           "Tell a story about {topic}[ ({detail})].", "--no-chat-template"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto rows = read_jsonl(dir + "/out.jsonl");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0]["prompt"], "Tell a story about a cat (who, quietly, sleeps).");
  EXPECT_EQ(rows[1]["prompt"], "Tell a story about dog.");  // the empty detail drops its section
  const auto with_system = generate({"--input", dir + "/in.csv", "--output", dir + "/sys.jsonl", "--prompt-template",
                                     "{topic}", "--system", "Be brief.", "--no-chat-template"});
  ASSERT_EQ(with_system.exit_code, 0) << with_system.err;
  EXPECT_EQ(read_jsonl(dir + "/sys.jsonl")[0]["prompt"], "Be brief.\n\na cat");
}

TEST(DatasetsCli, BadRowsAreSkippedWithTheirLineOrStopTheJob) {
  const std::string dir = make_temp_dir("badrows");
  write_file(dir + "/in.jsonl", "{\"prompt\": \"Once\"}\n{\"prompt\": broken\n{\"prompt\": \"Then\"}\n");
  const auto skipped = generate({"--input", dir + "/in.jsonl", "--output", dir + "/out.jsonl", "--on-bad-row", "skip"});
  EXPECT_EQ(skipped.exit_code, 3);
  EXPECT_THAT(skipped.err, HasSubstr("in.jsonl:2"));
  const auto rows = read_jsonl(dir + "/out.jsonl");
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[1]["status"], "skipped");
  EXPECT_THAT(rows[1]["error"].get<std::string>(), HasSubstr("in.jsonl:2"));
  EXPECT_EQ(rows[2]["output_tokens"], 8);

  const auto stopped = generate({"--input", dir + "/in.jsonl", "--output", dir + "/stop.jsonl"});
  EXPECT_EQ(stopped.exit_code, 1);
  EXPECT_THAT(stopped.err, HasSubstr("in.jsonl:2"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/stop.jsonl"));
}

TEST(DatasetsCli, ExportsAndJobsCommands) {
  const std::string dir = make_temp_dir("exports");
  const std::string job = dir + "/run.sluicejob";
  const auto r = generate({"--input", shared_path("datasets/en/alpaca_5000.json"), "--limit", "4", "--job", job,
                           "--n", "2", "--temperature", "1", "--seed", "5", "--output", dir + "/dpo.jsonl", "--export",
                           "dpo"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto pairs = read_jsonl(dir + "/dpo.jsonl");
  EXPECT_GE(pairs.size(), 1u);
  for (const auto& p : pairs) {
    EXPECT_TRUE(p.contains("prompt") && p.contains("chosen") && p.contains("rejected"));
    EXPECT_GE(p["chosen"].get<std::string>().size(), p["rejected"].get<std::string>().size());  // longest wins
  }

  const auto listed = run_sluice({"jobs", "list", dir});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_THAT(listed.out, HasSubstr("run.sluicejob"));
  EXPECT_THAT(listed.out, HasSubstr("4 done"));
  const auto shown = run_sluice({"jobs", "show", job});
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_THAT(shown.out, HasSubstr("alpaca_5000.json"));
  EXPECT_THAT(shown.out, HasSubstr("\"temperature\""));

  const auto alpaca = run_sluice({"jobs", "export", job, "--format", "alpaca", "--output", dir + "/alpaca.json"});
  ASSERT_EQ(alpaca.exit_code, 0) << alpaca.err;
  const auto array = nlohmann::json::parse(read_file(dir + "/alpaca.json"));
  ASSERT_EQ(array.size(), 4u);
  const auto source = nlohmann::json::parse(read_file(shared_path("datasets/en/alpaca_5000.json")));
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(array[i]["instruction"], source[i]["instruction"]);
    EXPECT_EQ(array[i]["input"], source[i]["input"]);
  }
  EXPECT_EQ(run_sluice({"jobs", "export", job, "--format", "yaml", "--output", dir + "/x"}).exit_code, 2);
}

TEST(DatasetsCli, ResumeRefusesAChangedInput) {
  const std::string dir = make_temp_dir("changed");
  write_file(dir + "/in.jsonl", "{\"prompt\": \"Once\"}\n");
  ASSERT_EQ(generate({"--input", dir + "/in.jsonl", "--job", dir + "/j.sluicejob"}).exit_code, 0);
  write_file(dir + "/in.jsonl", "{\"prompt\": \"Twice\"}\n");
  const auto r = run_sluice({"generate", "--resume", dir + "/j.sluicejob", "--output", dir + "/o.jsonl"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("changed"));
  EXPECT_EQ(run_sluice({"generate", "--resume", dir + "/j.sluicejob", "--temperature", "1"}).exit_code, 2);
}

}  // namespace
}  // namespace sluice::test
