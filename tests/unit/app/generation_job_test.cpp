// GenerationJob and EngineWorker on the stories260K model: a row is shown (on_row, the worker's
// rowsFinished and progress) only once its commit made it safe in the job file, and a resume
// runs a stored row that does not read back again.
#include "app/generation_job.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <thread>

#include "app/engine_worker.h"
#include "engine/jobs/job_table.h"
#include "engine/jobs/sqlite_db.h"
#include "tests/unit/app/job_test_util.h"
#include "tests/unit/engine/engine_test_util.h"

namespace sluice::test {
namespace {

TEST(GenerationJob, RowsAreAnnouncedOnlyOnceCommittedAndInBatches) {
  constexpr int64_t kNumRows = 200;
  const std::string dir = make_temp_dir("gen-job-commit");
  const std::string path = dir + "/job.sluicejob";
  auto job = GenerationJob::create(stories_spec(dir, kNumRows), path);
  job->load(lend_alone(job->spec()));
  // Another connection, as the GUI's table and a crash's survivor would see the file.
  const auto file = JobTable::open(path);
  int64_t num_announced = 0;
  std::set<int64_t> commits_seen;  // data_version at each announcement
  const auto start = std::chrono::steady_clock::now();
  int64_t most_committing = 0;  // rows finished and waiting for their commit, at most
  const RunSummary summary = job->run(
      [&](const RowResult& row, double) {
        ++num_announced;
        EXPECT_TRUE(file->row(row.row_index).has_value())
            << "row " << row.row_index << " announced before its commit";
        commits_seen.insert(file->data_version());
      },
      [&](const StepStats&, const JobProgress& progress) {
        EXPECT_LE(progress.rows_done, file->count({})) << "progress counts uncommitted rows";
        EXPECT_LE(progress.rows_done + progress.rows_committing, kNumRows);
        most_committing = std::max(most_committing, progress.rows_committing);
      });
  // Rows wait for a commit in batches, and progress says how many (the GUI's backlog leaves
  // them out: they are finished).
  EXPECT_GT(most_committing, 0);
  EXPECT_EQ(num_announced, kNumRows);
  EXPECT_EQ(summary.progress.rows_done, kNumRows);
  EXPECT_EQ(file->count({}), kNumRows);
  // Throughput: rows go to the file in batches, not a commit each: one per 64 rows or per
  // second (JobStore's rule), however slow the machine that runs the test.
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LE(static_cast<double>(commits_seen.size()), kNumRows / 64 + seconds + 2)
      << "in " << seconds << " s";
}

TEST(GenerationJob, ResumeRunsAnUnreadableRowAgain) {
  const std::string dir = make_temp_dir("gen-job-unreadable");
  const std::string path = dir + "/job.sluicejob";
  std::vector<SampleResult> row2_samples;
  {
    auto job = GenerationJob::create(stories_spec(dir, 6), path);
    job->load(lend_alone(job->spec()));
    EXPECT_EQ(job->run(nullptr, nullptr).progress.rows_done, 6);
    row2_samples = job->store().result(2)->samples;
  }
  {
    SqliteDb db(path, SqliteDb::Mode::OpenExisting);
    db.exec("UPDATE rows SET samples = '[{' WHERE row_index = 2");
  }
  auto job = GenerationJob::resume(path, "cpu", 1);
  job->load(lend_alone(job->spec()));
  ASSERT_EQ(job->unreadable_rows().size(), 1u);
  EXPECT_EQ(job->unreadable_rows()[0].row_index, 2);
  std::vector<int64_t> rerun;
  const RunSummary summary =
      job->run([&](const RowResult& row, double) { rerun.push_back(row.row_index); }, nullptr);
  EXPECT_EQ(rerun, std::vector<int64_t>{2});
  EXPECT_EQ(summary.progress.rows_resumed, 5);
  // Greedy: the rerun gives back what the damaged row held.
  EXPECT_EQ(job->store().result(2)->samples, row2_samples);
}

// The progress carries the job file's counts, earlier runs included: the GUI's status shows
// these, and they must agree with `sluice jobs show` (the file's counts()).
TEST(GenerationJob, ProgressCountsAreTheJobFilesAfterAResume) {
  const std::string dir = make_temp_dir("gen-job-counts");
  const std::string path = dir + "/job.sluicejob";
  {
    auto job = GenerationJob::create(stories_spec(dir, 6), path);
    job->load(lend_alone(job->spec()));
    const JobProgress progress = job->run(nullptr, nullptr).progress;
    EXPECT_EQ(progress.job.done, 6);
    EXPECT_EQ(progress.job.total_rows, 6);
  }
  {
    SqliteDb db(path, SqliteDb::Mode::OpenExisting);
    db.exec("UPDATE rows SET status = 'failed' WHERE row_index = 1");  // an earlier run's failure
    db.exec("UPDATE rows SET status = 'bogus' WHERE row_index = 4");   // unreadable: runs again
  }
  auto job = GenerationJob::resume(path, "cpu", 1);
  job->load(lend_alone(job->spec()));
  std::vector<JobCounts> seen;
  const JobProgress progress =
      job->run(nullptr, [&](const StepStats&, const JobProgress& p) { seen.push_back(p.job); })
          .progress;
  const JobCounts file = job->store().counts();
  EXPECT_EQ(file.failed, 1);
  EXPECT_EQ(progress.job.done, file.done);
  EXPECT_EQ(progress.job.failed, file.failed);
  EXPECT_EQ(progress.job.skipped, file.skipped);
  EXPECT_EQ(progress.job.unreadable, file.unreadable);
  EXPECT_EQ(progress.job.total_rows, file.total_rows);
  EXPECT_EQ(progress.job.finished(), 6);
  for (const JobCounts& c : seen) EXPECT_EQ(c.failed, 1) << "a live count lost the earlier failure";
}

// "Run this row alone" goes to the job's own engine service, beside the rows still running,
// and gives back the row's stored samples.
TEST(GenerationJob, RunRowAloneRunsOnTheJobsServiceBesideItsRows) {
  const std::string dir = make_temp_dir("gen-job-alone");
  auto job = GenerationJob::create(stories_spec(dir, 60), dir + "/job.sluicejob");
  job->load(lend_alone(job->spec()));
  int num_checked = 0;
  job->run(
      [&](const RowResult& row, double) {
        if (num_checked++ > 0) return;  // the first announced row, while others still run
        EXPECT_EQ(job->run_row_alone(row.row_index), row.samples);
      },
      nullptr);
  EXPECT_EQ(num_checked, 60);
  // One engine served the job's 60 rows and the row run alone.
  EXPECT_EQ(job->service().metrics().num_requests_finished, 61);
}

// A batch line runs with its own parameters, in the job and when run alone again: the body's
// max_tokens and n, not the spec's.
TEST(GenerationJob, BatchLinesRunWithTheirOwnParametersAloneToo) {
  const std::string dir = make_temp_dir("gen-job-batch");
  GenerationSpec spec = stories_spec(dir, 1);
  write_file(
      spec.input_path,
      R"({"custom_id": "a", "method": "POST", "url": "/v1/completions", "body": {"model": "m", "prompt": "Once", "max_tokens": 3, "n": 2, "temperature": 1.0, "seed": 4}})"
      "\n"
      R"({"custom_id": "b", "method": "POST", "url": "/v1/chat/completions", "body": {"model": "m", "messages": [{"role": "user", "content": "Tom"}], "max_tokens": 5}})"
      "\n");
  auto job = GenerationJob::create(spec, dir + "/job.sluicejob");
  job->load(lend_alone(job->spec()));
  std::vector<RowResult> rows;
  job->run([&](const RowResult& row, double) { rows.push_back(row); }, nullptr);
  ASSERT_EQ(rows.size(), 2u);
  std::sort(rows.begin(), rows.end(),
            [](const RowResult& x, const RowResult& y) { return x.row_index < y.row_index; });
  ASSERT_EQ(rows[0].samples.size(), 2u);
  EXPECT_EQ(rows[0].seed, 4u);
  EXPECT_EQ(rows[0].prompt, "Once");  // a completion prompt as is, no chat turn around it
  for (const SampleResult& sample : rows[0].samples) EXPECT_EQ(sample.output_tokens, 3);
  ASSERT_EQ(rows[1].samples.size(), 1u);
  EXPECT_EQ(rows[1].samples[0].output_tokens, 5);
  EXPECT_EQ(rows[1].input["custom_id"], "b");
  EXPECT_EQ(job->run_row_alone(0), rows[0].samples);
  EXPECT_EQ(job->run_row_alone(1), rows[1].samples);
}

// A model stays loaded across jobs: two jobs lent by one host, with the same options, both run on
// its one service.
TEST(GenerationJob, JobsShareAServiceGivenToThem) {
  const std::string dir = make_temp_dir("gen-job-shared");
  const GenerationSpec spec = stories_spec(dir, 20);
  ModelHost host;
  auto first = GenerationJob::create(spec, dir + "/first.sluicejob");
  first->load(host.lend_for_job(first->spec()));
  const std::shared_ptr<RequestService> service = first->lease().service;
  first->run(nullptr, nullptr);
  auto second = GenerationJob::create(spec, dir + "/second.sluicejob");
  second->load(host.lend_for_job(second->spec()));
  EXPECT_EQ(second->lease().service, service);
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  double first_arrival_s = 1e9;  // the second job's timeline starts with its run, not the service
  second->run([&](const RowResult&,
                  double arrival_s) { first_arrival_s = std::min(first_arrival_s, arrival_s); },
              nullptr);
  EXPECT_GT(service->seconds_since_start(), 1.0);
  EXPECT_LT(first_arrival_s, 0.5);
  EXPECT_GE(first_arrival_s, 0.0);
  EXPECT_EQ(service->metrics().num_requests_finished, 40);
  for (int64_t row = 0; row < 20; ++row)
    EXPECT_EQ(second->store().result(row)->samples, first->store().result(row)->samples);
  // A local job lent a service without its model's session (whose tokenizer builds its prompts)
  // is refused rather than guessing at the model.
  auto third = GenerationJob::create(spec, dir + "/third.sluicejob");
  EXPECT_THROW(third->load(ServiceLease{service, nullptr, ""}), Error);
}

// While paused the job submits nothing and commits nothing; it finishes once resumed.
TEST(GenerationJob, PauseCommitsNothingUntilResumed) {
  const std::string dir = make_temp_dir("gen-job-pause");
  const std::string path = dir + "/job.sluicejob";
  auto job = GenerationJob::create(stories_spec(dir, 40), path);
  job->load(lend_alone(job->spec()));
  const auto file = JobTable::open(path);
  std::atomic<bool> pause{true};
  std::atomic<bool> cancel{false};
  RunSummary summary;
  std::thread runner([&] { summary = job->run(nullptr, nullptr, &cancel, &pause); });
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  EXPECT_EQ(file->count({}), 0) << "rows were committed while paused";
  pause = false;
  runner.join();
  EXPECT_EQ(summary.progress.rows_done, 40);
  EXPECT_EQ(file->count({}), 40);
}

// Rows whose prompts do not fit the context fail, are skipped or are truncated to their end, as
// the spec asks; the engine is only given prompts that fit.
TEST(GenerationJob, LongPromptsFailAreSkippedOrTruncatedAsAsked) {
  constexpr int kMaxModelLen = 64;
  std::string story;  // some 200 tokens, past the 64-token context once tokenized
  for (int i = 0; i < 40; ++i) story += "The cat sat on the mat. ";
  const std::string huge(20000, 'a');  // refused before tokenizing
  for (const auto policy :
       {LongPromptPolicy::Fail, LongPromptPolicy::Skip, LongPromptPolicy::Truncate}) {
    const std::string dir = make_temp_dir("gen-job-long");
    GenerationSpec spec = stories_spec(dir, 0);
    write_file(dir + "/input.jsonl", nlohmann::json{{"prompt", "Once upon a time"}}.dump() + "\n" +
                                         nlohmann::json{{"prompt", story}}.dump() + "\n" +
                                         nlohmann::json{{"prompt", huge}}.dump() + "\n");
    spec.engine.max_model_len = kMaxModelLen;
    spec.on_long_prompt = policy;
    const std::string path = dir + "/job.sluicejob";
    auto job = GenerationJob::create(spec, path);
    job->load(lend_alone(job->spec()));
    std::vector<RowResult> rows(3);
    job->run(
        [&](const RowResult& row, double) { rows.at(static_cast<size_t>(row.row_index)) = row; },
        nullptr);
    const std::string name = to_string(policy);
    EXPECT_EQ(rows[0].status, RowStatus::Done) << name;
    for (size_t i : {1u, 2u}) {
      const RowResult& row = rows[i];
      switch (policy) {
        case LongPromptPolicy::Fail:
          EXPECT_EQ(row.status, RowStatus::Failed) << "row " << i;
          break;
        case LongPromptPolicy::Skip:
          EXPECT_EQ(row.status, RowStatus::Skipped) << "row " << i;
          EXPECT_NE(row.error.find("input.jsonl:" + std::to_string(i + 1) + ": "),
                    std::string::npos)
              << row.error;
          EXPECT_NE(row.error.find("64 tokens"), std::string::npos) << row.error;
          break;
        case LongPromptPolicy::Truncate:
          // max(64 / 2, 64 - 12 max_tokens) = 52 tokens, the prompt's end.
          EXPECT_EQ(row.status, RowStatus::Done) << "row " << i << ": " << row.error;
          EXPECT_EQ(row.prompt_tokens, 52) << "row " << i;
          break;
      }
    }
    // The choice is kept in the job, so a resume truncates or skips the same way.
    EXPECT_EQ(spec_from_json(JobStore::open(path)->info().params).on_long_prompt, policy) << name;
  }
}

// "Run this row alone" of a truncated row applies the job's policy as its run did: the same
// prompt end (a row tokenized then cut, and one refused before tokenizing), so under greedy it
// gives the row's stored samples instead of a prompt the engine refuses.
TEST(GenerationJob, RunRowAloneTruncatesALongPromptAsTheRunDid) {
  std::string story;  // some 200 tokens, past the 64-token context once tokenized
  for (int i = 0; i < 40; ++i) story += "Tim found a red ball in the park. ";
  const std::string dir = make_temp_dir("gen-job-alone-long");
  GenerationSpec spec = stories_spec(dir, 0);
  write_file(dir + "/input.jsonl", nlohmann::json{{"prompt", story}}.dump() + "\n" +
                                       nlohmann::json{{"prompt", std::string(20000, 'b')}}.dump() +
                                       "\n");
  spec.engine.max_model_len = 64;
  spec.on_long_prompt = LongPromptPolicy::Truncate;
  auto job = GenerationJob::create(spec, dir + "/job.sluicejob");
  job->load(lend_alone(job->spec()));
  std::vector<RowResult> rows(2);
  job->run([&](const RowResult& row, double) { rows.at(static_cast<size_t>(row.row_index)) = row; },
           nullptr);
  for (int64_t i : {0, 1}) {
    const RowResult& row = rows[static_cast<size_t>(i)];
    ASSERT_EQ(row.status, RowStatus::Done) << "row " << i << ": " << row.error;
    ASSERT_EQ(row.prompt_tokens, 52) << "row " << i;
    ASSERT_EQ(row.samples.size(), 1u);
    std::vector<SampleResult> alone;
    EXPECT_NO_THROW(alone = job->run_row_alone(i)) << "row " << i;
    EXPECT_EQ(alone, row.samples) << "row " << i;
  }
}

// The app's path: what the worker sends the window (rows for the table and timeline, progress
// for the status bar) is already in the job file.
TEST(EngineWorker, RowsAndProgressAreSentOnlyOnceCommitted) {
  const std::string dir = make_temp_dir("worker-commit");
  const std::string path = dir + "/job.sluicejob";
  EngineWorker worker;
  std::unique_ptr<JobTable> file;
  int64_t num_rows_sent = 0;
  bool has_finished = false;
  QObject::connect(&worker, &EngineWorker::jobStarted,
                   [&](quint64, const QString& jobPath, const QString&) {
                     file = JobTable::open(jobPath.toStdString());
                   });
  QObject::connect(&worker, &EngineWorker::rowsFinished,
                   [&](quint64, const QVector<RowSnapshot>& rows) {
                     for (const RowSnapshot& row : rows) {
                       ++num_rows_sent;
                       EXPECT_TRUE(file->row(row.rowIndex).has_value())
                           << "row " << row.rowIndex << " sent before its commit";
                     }
                   });
  QObject::connect(&worker, &EngineWorker::statsUpdated,
                   [&](quint64, const StepStats&, const JobProgress& progress) {
                     EXPECT_LE(progress.rows_done, file->count({}));
                   });
  QObject::connect(&worker, &EngineWorker::jobFinished,
                   [&](quint64, const JobProgress&, bool) { has_finished = true; });
  QObject::connect(&worker, &EngineWorker::jobFailed, [&](quint64, const QString& message) {
    ADD_FAILURE() << message.toStdString();
  });
  worker.runJob(1, stories_spec(dir, 150), QString::fromStdString(path), false);  // this thread
  EXPECT_TRUE(has_finished);
  EXPECT_EQ(num_rows_sent, 150);
}

}  // namespace
}  // namespace sluice::test

namespace sluice {
namespace {

// Expert offload travels with a job as engine.num_cpu_moe_layers, written only when asked for;
// a count out of range is refused.
TEST(GenerationSpecJson, NumCpuMoeLayersIsKeptOnlyWhenAskedFor) {
  GenerationSpec spec;
  EXPECT_FALSE(spec_to_json(spec)["engine"].contains("num_cpu_moe_layers"));
  EXPECT_EQ(spec_from_json(spec_to_json(spec)).engine.num_cpu_moe_layers, 0);
  spec.engine.num_cpu_moe_layers = 3;
  EXPECT_EQ(spec_to_json(spec)["engine"]["num_cpu_moe_layers"], 3);
  EXPECT_EQ(spec_from_json(spec_to_json(spec)).engine.num_cpu_moe_layers, 3);
  spec.engine.num_cpu_moe_layers = kAllMoeLayers;
  EXPECT_EQ(spec_from_json(spec_to_json(spec)).engine.num_cpu_moe_layers, kAllMoeLayers);
  auto bad = spec_to_json(spec);
  bad["engine"]["num_cpu_moe_layers"] = -2;
  EXPECT_THROW(spec_from_json(bad), Error);
}

// The KV cache type travels with a job (a resume builds the same engine), and a job that never
// asked for one writes nothing new.
TEST(GenerationSpecJson, KvCacheDtypeIsKeptOnlyWhenAskedFor) {
  GenerationSpec spec;
  EXPECT_FALSE(spec_to_json(spec)["engine"].contains("kv_cache_dtype"));
  EXPECT_EQ(spec_from_json(spec_to_json(spec)).engine.kv_cache_dtype, KvCacheDType::Auto);
  spec.engine.kv_cache_dtype = KvCacheDType::Fp8;
  EXPECT_EQ(spec_to_json(spec)["engine"]["kv_cache_dtype"], "fp8");
  EXPECT_EQ(spec_from_json(spec_to_json(spec)).engine.kv_cache_dtype, KvCacheDType::Fp8);
}

}  // namespace
}  // namespace sluice
