// `sluice pipeline run`: a 3-step job (generate n = 4, judge, dedup) and its export on stories260K.
// Killed with SIGKILL inside the generation and inside the judging, it resumes to a Hub folder
// byte-identical to an uninterrupted run's, without generating or judging anything twice; editing
// only the rubric runs no generation and editing only a threshold runs no model at all (counted
// in run.json, the run's figures, and the report).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <thread>

#include "engine/jobs/job_store.h"
#include "tests/integration/cli_test_util.h"
#include "tests/integration/serve_process.h"
#include "tests/unit/engine/engine_test_util.h"

namespace sluice::test {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

// rows prompts, every fifth one the same as the one before it (exact duplicates for dedup) and
// every seventh the one before it with its last word changed (near ones, when long enough).
std::string write_pipeline_input(const std::string& dir, size_t rows) {
  const std::vector<std::string> prompts = alpaca_prompts(rows);
  std::string jsonl;
  for (size_t i = 0; i < rows; ++i) {
    std::string prompt = prompts[i];
    if (i % 5 == 4) prompt = prompts[i - 1];
    jsonl += Json{{"prompt", prompt}}.dump() + "\n";
  }
  write_file(dir + "/prompts.jsonl", jsonl);
  return dir + "/prompts.jsonl";
}

// The description of the 3 steps and the export.
Json pipeline(const std::string& input, const std::string& instructions, double threshold) {
  // Three ratings a sample at temperature 1: stories260K rates everything 1 when greedy.
  Json judge = {{"step", "judge"},
                {"rubric", "ultrafeedback"},
                {"k", 3},
                {"rationale_chars", 24},
                {"options", {{"max-tokens", 64}, {"temperature", 1.0}, {"threads", 1}}},
                {"pairs", {{"rule", "best_vs_worst"}, {"drop_ties", true}}}};
  if (!instructions.empty()) judge["instructions"] = instructions;
  return {{"name", "tiny-dpo"},
          {"steps",
           {{{"step", "generate"},
             {"options",
              {{"model", shared_path(kGgufF32)},
               {"input", input},
               {"n", 4},
               {"temperature", 0.9},
               {"seed", 11},
               {"max-tokens", 32},
               {"threads", 1}}}},
            judge,
            {{"step", "dedup"}, {"threshold", threshold}},
            {{"step", "export"}, {"dir", "dataset"}, {"license", "cc-by-4.0"}}}}};
}

std::string write_description(const std::string& dir, const Json& description) {
  write_file(dir + "/pipeline.json", description.dump(2));
  return dir + "/pipeline.json";
}

std::vector<std::string> pipeline_args(const std::string& file, const std::string& dir) {
  return {SLUICE_EXECUTABLE, "pipeline", "run", file, "--dir", dir};
}

Json run_summary(const std::string& dir) {
  return Json::parse(read_file(dir + "/run.json"));
}

const Json& step_of(const Json& summary, const std::string& name) {
  for (const Json& s : summary["steps"])
    if (s["step"] == name) return s;
  ADD_FAILURE() << "no step " << name << " in " << summary.dump();
  static const Json none;
  return none;
}

// The job file of a model step (name "generate" or "judge") in the pipeline's folder, or "".
std::string step_job(const std::string& dir, const std::string& name) {
  if (!fs::exists(dir + "/steps")) return "";
  for (const auto& entry : fs::directory_iterator(dir + "/steps")) {
    const std::string file = entry.path().filename().string();
    if (file.rfind(name + "-", 0) == 0 && entry.path().extension() == ".sluicejob")
      return entry.path().string();
  }
  return "";
}

// Starts the pipeline and kills it with SIGKILL once the named step's job has committed rows.
// Returns the rows it had then.
int64_t kill_during(const std::string& file, const std::string& dir, const std::string& step) {
  BackgroundProcess run(pipeline_args(file, dir));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(600);
  int64_t rows = 0;
  while (run.is_running() && std::chrono::steady_clock::now() < deadline) {
    const std::string job = step_job(dir, step);
    if (!job.empty() && (rows = committed_rows(job)) > 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_TRUE(run.is_running()) << "the pipeline finished before its " << step
                                << " step could be killed";
  EXPECT_EQ(run.kill_now(), 128 + SIGKILL);
  return rows;
}

std::string export_bytes(const std::string& dir) {
  return read_file(dir + "/dataset/data/train.jsonl") + "\n--\n" +
         read_file(dir + "/dataset/data/train.parquet") + "\n--\n" +
         read_file(dir + "/dataset/README.md");
}

TEST(PipelineCli, KilledInEachModelStepItResumesToTheSameExportWithoutRepeatingWork) {
  const std::string base = make_temp_dir("pipeline-kill");
  const std::string input = write_pipeline_input(base, 160);
  const std::string file = write_description(base, pipeline(input, "", 0.8));

  const std::string reference = base + "/reference";
  const auto whole = run_process(pipeline_args(file, reference));
  ASSERT_EQ(whole.exit_code, 0) << whole.err;
  const Json whole_summary = run_summary(reference);
  const int64_t samples = step_of(whole_summary, "generate")["model_calls"];
  const int64_t judgements = step_of(whole_summary, "judge")["model_calls"];
  EXPECT_EQ(samples, 160 * 4);
  EXPECT_EQ(judgements, samples * 3);  // three ratings per sample
  const int64_t exported = whole_summary["rows_exported"];
  ASSERT_GT(exported, 0);
  // Dedup took out the planted exact duplicates (every fifth prompt), so at most 128 pairs.
  EXPECT_LE(exported, 128);
  EXPECT_GE(static_cast<int64_t>(step_of(whole_summary, "dedup")["rows_in"]) -
                static_cast<int64_t>(step_of(whole_summary, "dedup")["rows_out"]),
            32);

  const std::string dir = base + "/killed";
  const int64_t generated_before = kill_during(file, dir, "generate");
  ASSERT_GT(generated_before, 0);
  const std::string generate_job = step_job(dir, "generate");
  const int64_t rows_kept = JobStore::open(generate_job)->counts().done;  // opens after kill -9
  ASSERT_LT(rows_kept, 160);
  const int64_t judged_before = kill_during(file, dir, "judge");
  ASSERT_GT(judged_before, 0);
  // Judge rows (one per sample, three ratings each) committed before the second kill.
  const int64_t judged_rows = JobStore::open(step_job(dir, "judge"))->counts().done;
  ASSERT_LT(judged_rows, samples);

  const auto resumed = run_process(pipeline_args(file, dir));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  const Json summary = run_summary(dir);
  EXPECT_TRUE(step_of(summary, "generate")["cached"]) << summary.dump();
  EXPECT_EQ(step_of(summary, "generate")["model_calls"], 0);
  // Only the judgements the job did not hold: nothing judged twice.
  EXPECT_EQ(step_of(summary, "judge")["model_calls"], (samples - judged_rows) * 3);
  EXPECT_EQ(JobStore::open(step_job(dir, "judge"))->counts().done, samples);
  EXPECT_EQ(export_bytes(dir), export_bytes(reference));
}

TEST(PipelineCli, EditingTheRubricRunsNoGenerationAndEditingAThresholdRunsNoModel) {
  const std::string base = make_temp_dir("pipeline-cache");
  const std::string input = write_pipeline_input(base, 24);
  const std::string dir = base + "/run";
  const std::string file = base + "/pipeline.json";
  write_file(file, pipeline(input, "", 0.8).dump(2));
  const auto first = run_process(pipeline_args(file, dir));
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const Json first_summary = run_summary(dir);
  EXPECT_EQ(step_of(first_summary, "generate")["model_calls"], 24 * 4);
  const std::string first_export = export_bytes(dir);
  EXPECT_THAT(read_file(dir + "/report.html"), ::testing::HasSubstr("tiny-dpo"));

  // The same description again: every step cached, the same bytes.
  const auto again = run_process(pipeline_args(file, dir));
  ASSERT_EQ(again.exit_code, 0) << again.err;
  const Json again_summary = run_summary(dir);  // kept: a loop over a temporary's member dangles
  for (const Json& s : again_summary["steps"]) EXPECT_EQ(s["model_calls"], 0) << s.dump();
  EXPECT_EQ(export_bytes(dir), first_export);

  // The same description in YAML: the same steps and keys, so nothing runs.
  const std::string yaml = base + "/pipeline.yaml";
  write_file(yaml,
             "name: tiny-dpo\nsteps:\n"
             "  - step: generate\n"
             "    options:\n"
             "      model: \"" +
                 shared_path(kGgufF32) +
                 "\"\n"
                 "      input: '" +
                 input +
                 "'\n"
                 "      n: 4\n      temperature: 0.9\n      seed: 11\n"
                 "      max-tokens: 32\n      threads: 1\n"
                 "  - step: judge   # three ratings a sample\n"
                 "    rubric: ultrafeedback\n    k: 3\n    rationale_chars: 24\n"
                 "    options: {max-tokens: 64, temperature: 1.0, threads: 1}\n"
                 "    pairs:\n      rule: best_vs_worst\n      drop_ties: true\n"
                 "  - {step: dedup, threshold: 0.8}\n"
                 "  - step: export\n    dir: dataset\n    license: cc-by-4.0\n");
  const auto from_yaml = run_process(pipeline_args(yaml, dir));
  EXPECT_NE(from_yaml.exit_code, 0) << "flow mappings are refused by line";
  EXPECT_THAT(from_yaml.err, ::testing::HasSubstr("pipeline.yaml:16: flow mappings"));
  std::string text = read_file(yaml);
  text.replace(text.find("    options: {max-tokens: 64, temperature: 1.0, threads: 1}\n"),
               std::string("    options: {max-tokens: 64, temperature: 1.0, threads: 1}\n").size(),
               "    options:\n      max-tokens: 64\n      temperature: 1.0\n      threads: 1\n");
  text.replace(text.find("  - {step: dedup, threshold: 0.8}\n"),
               std::string("  - {step: dedup, threshold: 0.8}\n").size(),
               "  - step: dedup\n    threshold: 0.8\n");
  write_file(yaml, text);
  const auto yaml_again = run_process(pipeline_args(yaml, dir));
  ASSERT_EQ(yaml_again.exit_code, 0) << yaml_again.err;
  const Json yaml_summary = run_summary(dir);
  for (const Json& s : yaml_summary["steps"]) {
    EXPECT_EQ(s["model_calls"], 0) << s.dump();
    if (s["step"] != "export") {
      EXPECT_TRUE(s["cached"]) << s.dump();
    }
  }

  // Another rubric wording: the judge runs again, the generation does not.
  write_file(file, pipeline(input, "Rate the answer from 1 to 5.", 0.8).dump(2));
  const auto rejudged = run_process(pipeline_args(file, dir));
  ASSERT_EQ(rejudged.exit_code, 0) << rejudged.err;
  const Json rejudged_summary = run_summary(dir);
  EXPECT_TRUE(step_of(rejudged_summary, "generate")["cached"]);
  EXPECT_EQ(step_of(rejudged_summary, "generate")["generated_tokens"], 0);
  EXPECT_FALSE(step_of(rejudged_summary, "judge")["cached"]);
  EXPECT_EQ(step_of(rejudged_summary, "judge")["model_calls"], 24 * 4 * 3);

  // Only the dedup threshold: no model call at all, the dedup runs again.
  write_file(file, pipeline(input, "Rate the answer from 1 to 5.", 0.5).dump(2));
  const auto refiltered = run_process(pipeline_args(file, dir));
  ASSERT_EQ(refiltered.exit_code, 0) << refiltered.err;
  const Json refiltered_summary = run_summary(dir);
  for (const Json& s : refiltered_summary["steps"]) EXPECT_EQ(s["model_calls"], 0) << s.dump();
  EXPECT_TRUE(step_of(refiltered_summary, "judge")["cached"]);
  EXPECT_FALSE(step_of(refiltered_summary, "dedup")["cached"]);
  EXPECT_THAT(refiltered.err, ::testing::HasSubstr("step judge: cached"));

  // The judge one row at a time (max-num-seqs 1) instead of in batches: its key changes, so it
  // judges again, and every score and pair comes out the same (the engine's batch invariance).
  const std::string batched = read_file(dir + "/dataset/data/train.jsonl");
  Json alone = pipeline(input, "Rate the answer from 1 to 5.", 0.5);
  alone["steps"][1]["options"]["max-num-seqs"] = 1;
  write_file(file, alone.dump(2));
  const auto one_at_a_time = run_process(pipeline_args(file, dir));
  ASSERT_EQ(one_at_a_time.exit_code, 0) << one_at_a_time.err;
  EXPECT_EQ(step_of(run_summary(dir), "judge")["model_calls"], 24 * 4 * 3);
  EXPECT_EQ(read_file(dir + "/dataset/data/train.jsonl"), batched);
}

TEST(PipelineCli, ABadDescriptionIsRefusedNamingTheStepAndKey) {
  const std::string base = make_temp_dir("pipeline-bad");
  const std::string input = write_pipeline_input(base, 4);
  Json d = pipeline(input, "", 0.8);
  d["steps"][2]["treshold"] = 0.7;
  const auto typo = run_process(pipeline_args(write_description(base, d), base + "/run"));
  EXPECT_EQ(typo.exit_code, 1);
  EXPECT_THAT(typo.err, ::testing::HasSubstr("step 3 (dedup): unknown key \"treshold\""));

  d = pipeline(input, "", 0.8);
  d["steps"][0]["options"]["max-tokns"] = 3;
  const auto option = run_process(pipeline_args(write_description(base, d), base + "/run"));
  EXPECT_EQ(option.exit_code, 1);
  EXPECT_THAT(option.err, ::testing::HasSubstr("step 1 (generate): options: "));
  EXPECT_THAT(option.err, ::testing::HasSubstr("max-tokns"));

  d = pipeline(input, "", 0.8);
  std::swap(d["steps"][0], d["steps"][1]);
  const auto order = run_process(pipeline_args(write_description(base, d), base + "/run"));
  EXPECT_EQ(order.exit_code, 1);
  EXPECT_THAT(order.err, ::testing::HasSubstr("the first step must be generate"));

  write_file(base + "/broken.json", "{\"steps\": [");
  const auto broken = run_process(pipeline_args(base + "/broken.json", base + "/run"));
  EXPECT_EQ(broken.exit_code, 1);
  EXPECT_THAT(broken.err, ::testing::HasSubstr("broken.json: not valid JSON"));
}

// The judge may be another server: the same description with the judge's options naming an
// endpoint (here `sluice serve` on the same small model) judges every sample over HTTP.
TEST(PipelineCli, TheJudgeCanBeARemoteServer) {
  const std::string base = make_temp_dir("pipeline-remote");
  const std::string input = write_pipeline_input(base, 6);
  ServeProcess server;
  Json d = pipeline(input, "", 0.8);
  d["steps"][0]["options"]["n"] = 2;
  d["steps"][1]["options"] = {
      {"endpoint", "http://127.0.0.1:" + std::to_string(server.port()) + "/v1"},
      {"max-tokens", 64},
      {"temperature", 1.0}};
  const std::string dir = base + "/run";
  const auto run = run_process(pipeline_args(write_description(base, d), dir));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const Json summary = run_summary(dir);
  EXPECT_EQ(step_of(summary, "judge")["model_calls"], 6 * 2 * 3);
  EXPECT_GT(server.metrics()["request_success_total"], 6 * 2 * 3 - 1);
  // Every sample of the generation job has the judge's score.
  int64_t scored = 0;
  JobStore::open(step_job(dir, "generate"))->for_each_result([&](const RowResult& row) {
    for (const SampleResult& s : row.samples) scored += s.extra.contains("score") ? 1 : 0;
  });
  EXPECT_EQ(scored, 6 * 2) << summary.dump();
}

}  // namespace
}  // namespace sluice::test
