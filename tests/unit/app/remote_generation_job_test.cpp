// GenerationJob with a remote spec, against the fake OpenAI server: no model is loaded, each
// row goes as chat messages (or as text with use_chat_template false) with the job's system
// prompt, results land in the job file, a resumed job needs the same model name, "run this
// row alone" asks the server again, and a batch line's own seed reaches the server as written.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "app/generation_job.h"
#include "app/remote/remote_driver.h"
#include "tests/support/fake_openai_server.h"
#include "tests/support/test_paths.h"
#include "tests/unit/app/job_test_util.h"

namespace sluice::test {
namespace {

using ::testing::HasSubstr;

GenerationSpec remote_spec(const std::string& dir, const std::string& url, int num_rows) {
  std::string jsonl;
  for (int i = 0; i < num_rows; ++i)
    jsonl += nlohmann::json{{"instruction", "question " + std::to_string(i)}}.dump() + "\n";
  write_file(dir + "/input.jsonl", jsonl);
  GenerationSpec spec;
  spec.input_path = dir + "/input.jsonl";
  spec.prompt.system_prompt = "Be brief.";
  spec.remote.endpoints = {url};
  spec.remote.concurrency = 4;
  return spec;
}

TEST(RemoteGenerationJob, RowsGoAsChatMessagesAndLandInTheJob) {
  FakeOpenAiServer fake;
  const std::string dir = make_temp_dir("remote-job");
  auto job = GenerationJob::create(remote_spec(dir, fake.url(), 12), dir + "/job.sluicejob");
  job->load(lend_alone(job->spec()));
  EXPECT_TRUE(job->is_remote());
  EXPECT_EQ(job->lease().model_name, "fake");
  std::vector<int64_t> rows;
  const RunSummary summary =
      job->run([&](const RowResult& r, double) { rows.push_back(r.row_index); }, nullptr);
  EXPECT_EQ(summary.progress.rows_done, 12);
  EXPECT_EQ(rows.size(), 12u);
  for (int64_t i = 0; i < 12; ++i) {
    const auto result = job->store().result(i);
    ASSERT_TRUE(result.has_value());
    ASSERT_EQ(result->samples.size(), 1u);
    EXPECT_EQ(result->samples[0].output,
              FakeOpenAiServer::answer_to("question " + std::to_string(i)));
    EXPECT_EQ(result->samples[0].output_tokens, 3);  // the server's usage, not the text's length
  }
  const auto seen = fake.seen();
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen[0].path, "/v1/chat/completions");
  EXPECT_EQ(seen[0].body["messages"][0],
            (nlohmann::json{{"role", "system"}, {"content", "Be brief."}}));

  // Run alone: the server is asked again, with the row's own seed.
  const auto alone = job->run_row_alone(3);
  ASSERT_EQ(alone.size(), 1u);
  EXPECT_EQ(alone[0].output, FakeOpenAiServer::answer_to("question 3"));
  const auto again = fake.seen();
  ASSERT_EQ(again.size(), seen.size() + 1);
  EXPECT_EQ(again.back().body["seed"], RemoteDriver::sample_seed(0, 3, 0));
}

TEST(RemoteGenerationJob, WithoutAChatTemplateTheTextGoesToCompletions) {
  FakeOpenAiServer fake;
  const std::string dir = make_temp_dir("remote-job-text");
  GenerationSpec spec = remote_spec(dir, fake.url(), 2);
  spec.prompt.use_chat_template = false;
  auto job = GenerationJob::create(spec, dir + "/job.sluicejob");
  job->load(lend_alone(job->spec()));
  job->run(nullptr, nullptr);
  for (const auto& seen : fake.seen()) {
    EXPECT_EQ(seen.path, "/v1/completions");
    EXPECT_THAT(seen.body["prompt"].get<std::string>(), HasSubstr("Be brief.\n\nquestion "));
  }
  EXPECT_EQ(job->store().result(1)->samples[0].output,
            FakeOpenAiServer::answer_to("Be brief.\n\nquestion 1"));
}

TEST(RemoteGenerationJob, AResumedJobMustFindTheSameModel) {
  const std::string dir = make_temp_dir("remote-job-resume");
  const std::string path = dir + "/job.sluicejob";
  {
    FakeOpenAiServer fake("model-a");
    auto job = GenerationJob::create(remote_spec(dir, fake.url(), 2), path);
    job->load(lend_alone(job->spec()));
    job->run(nullptr, nullptr);
  }
  FakeOpenAiServer other("model-b");
  auto job = GenerationJob::resume(path, "cpu", 1);
  job->change_remote([&](RemoteSpec& s) { s.endpoints = {other.url()}; });
  try {
    job->load(lend_alone(job->spec()));
    FAIL() << "a job resumed on another model";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(),
                HasSubstr("the servers serve 'model-b', not the model the job started with"));
  }
}

// An OpenAI batch line's "seed" goes to the server as written for the first sample (what the
// line sent to that server directly would get), negative seeds included; the other samples and
// the lines without a seed get seeds mixed from (seed, row, sample).
TEST(RemoteGenerationJob, ABatchLinesOwnSeedReachesTheServerAsWritten) {
  FakeOpenAiServer fake;
  const std::string dir = make_temp_dir("remote-job-batch-seed");
  const auto line = [](const std::string& id, const nlohmann::json& extra) {
    nlohmann::json body = {{"model", "any"},
                           {"messages", {{{"role", "user"}, {"content", "about " + id}}}}};
    body.update(extra);
    return nlohmann::json{{"custom_id", id},
                          {"method", "POST"},
                          {"url", "/v1/chat/completions"},
                          {"body", body}}
               .dump() +
           "\n";
  };
  write_file(dir + "/batch.jsonl", line("seeded", {{"seed", 77}, {"n", 2}}) +
                                       line("negative", {{"seed", -5}}) +
                                       line("plain", nlohmann::json::object()));
  GenerationSpec spec;
  spec.input_path = dir + "/batch.jsonl";
  spec.remote.endpoints = {fake.url()};
  spec.sampling.seed = 9;
  auto job = GenerationJob::create(spec, dir + "/job.sluicejob");
  job->load(lend_alone(job->spec()));
  job->run(nullptr, nullptr);
  std::multiset<int64_t> seeds_of_seeded;
  int64_t seed_of_negative = 0, seed_of_plain = 0;
  for (const auto& seen : fake.seen()) {
    if (seen.path != "/v1/chat/completions") continue;
    const std::string content = seen.body["messages"][0]["content"];
    const int64_t seed = seen.body["seed"].get<int64_t>();
    if (content == "about seeded") seeds_of_seeded.insert(seed);
    if (content == "about negative") seed_of_negative = seed;
    if (content == "about plain") seed_of_plain = seed;
  }
  EXPECT_EQ(seeds_of_seeded, (std::multiset<int64_t>{
                                 77, static_cast<int64_t>(RemoteDriver::sample_seed(77, 0, 1))}));
  EXPECT_EQ(seed_of_negative, -5);
  EXPECT_EQ(seed_of_plain, static_cast<int64_t>(RemoteDriver::sample_seed(9, 2, 0)));

  // Run alone sends the line's seed again.
  job->run_row_alone(1);
  EXPECT_EQ(fake.seen().back().body["seed"].get<int64_t>(), -5);
}

}  // namespace
}  // namespace sluice::test
