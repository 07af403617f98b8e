// GenerationJob through its one seam, a RequestService: a fake service that runs nothing stands
// in for the engine and for remote servers, so what the job hands the service (and what it does
// with the answers and refusals) is seen exactly. The job does not care where its tokens come
// from; a row's grammar reaches the service as its source; a grammar the service refuses fails
// its row, or refuses the job before its file exists.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <mutex>

#include "app/generation_job.h"
#include "tests/support/test_paths.h"

namespace sluice::test {
namespace {

using ::testing::HasSubstr;

// A RequestService that runs nothing: every sample is answered at once (on the submitting
// thread) with "answer to row K, sample I", and what it was given (requests, grammars to check)
// is recorded. refuse (when set) says why the service refuses a grammar source (submit and
// check_grammar throw InvalidGrammar with it), or "" when it accepts it; notes (when set) gives
// the compile notes check_grammar returns.
class FakeRequestService final : public RequestService {
 public:
  std::function<std::string(const GrammarSource&)> refuse;  // "" accepts
  std::function<std::vector<std::string>(const GrammarSource&)> notes;
  int max_len = 0;  // 0: it checks lengths itself

  static std::string answer_to(uint64_t row_key, uint32_t sample_idx) {
    return str_cat("answer to row ", row_key, ", sample ", sample_idx);
  }

  std::unique_ptr<RequestHandle> submit(ServiceRequest request,
                                        std::function<void()> on_event) override {
    {
      const std::lock_guard lock(mutex_);
      requests_.push_back(request);
    }
    if (request.sampling.grammar && refuse) {
      if (std::string why = refuse(*request.sampling.grammar); !why.empty())
        throw InvalidGrammar(why);
    }
    const auto num_samples = static_cast<uint32_t>(request.sampling.n);
    auto stream = std::make_shared<RequestStream>(num_samples, std::move(on_event));
    auto handle = std::make_unique<RequestHandle>(stream);
    for (uint32_t i = 0; i < num_samples; ++i) {
      StreamEvent event{.is_finished = true};
      event.finished.sample_idx = i;
      event.finished.finish_reason = FinishReason::Stop;
      event.finished.output_text = answer_to(request.sample_key, i);
      event.finished.num_output_tokens = 5;
      event.finished.num_prompt_tokens = static_cast<int>(request.prompt_token_ids.size());
      stream->push(std::move(event));
    }
    ++num_steps_;
    return handle;
  }
  std::vector<std::string> check_grammar(const GrammarSource& source) override {
    {
      const std::lock_guard lock(mutex_);
      checked_.push_back(source);
    }
    if (refuse) {
      if (std::string why = refuse(source); !why.empty()) throw InvalidGrammar(why);
    }
    return notes ? notes(source) : std::vector<std::string>{};
  }
  ServiceMetrics metrics() const override { return {}; }
  int64_t num_steps() const override { return num_steps_.load(); }
  int max_model_len() const override { return max_len; }
  double seconds_since_start() const override { return 0.0; }
  std::string describe() const override { return "a fake service"; }

  std::vector<ServiceRequest> requests() const {
    const std::lock_guard lock(mutex_);
    return requests_;
  }
  std::vector<GrammarSource> checked() const {
    const std::lock_guard lock(mutex_);
    return checked_;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<ServiceRequest> requests_;
  std::vector<GrammarSource> checked_;
  std::atomic<int64_t> num_steps_{0};
};

std::shared_ptr<const ModelSession> stories_session() {
  static const auto session = std::make_shared<const ModelSession>(
      open_model_session(shared_path("models/stories260K/gguf/stories260K-f32.gguf"), ""));
  return session;
}

// A spec over rows (JSONL lines) in dir: a local stories260K spec, or a remote one whose
// endpoint is never contacted (the fake runs its rows).
GenerationSpec seam_spec(const std::string& dir, const std::vector<nlohmann::json>& rows,
                         bool is_remote) {
  std::string jsonl;
  for (const auto& row : rows) jsonl += row.dump() + "\n";
  write_file(dir + "/input.jsonl", jsonl);
  GenerationSpec spec;
  spec.input_path = dir + "/input.jsonl";
  spec.sampling.max_tokens = 8;
  if (is_remote)
    spec.remote.endpoints = {"http://never.invalid:9/v1"};
  else
    spec.model_path = shared_path("models/stories260K/gguf/stories260K-f32.gguf");
  return spec;
}

ServiceLease fake_lease(std::shared_ptr<FakeRequestService> fake, bool is_remote) {
  if (is_remote) return {std::move(fake), nullptr, "fake-model"};
  return {std::move(fake), stories_session(), ""};
}

std::vector<RowResult> run_all_rows(GenerationJob& job) {
  std::vector<RowResult> rows;
  job.run([&](const RowResult& row, double) { rows.push_back(row); }, nullptr);
  std::sort(rows.begin(), rows.end(),
            [](const RowResult& a, const RowResult& b) { return a.row_index < b.row_index; });
  return rows;
}

// The same job code runs on a local model's tokens and on text for remote servers: whatever the
// service answers lands in the job file, row by row (a job that reached around its service, to
// an engine or a driver of its own, would not see these answers). Catches a job that assumes
// which service it has.
TEST(JobSeam, TheJobDoesNotCareWhereItsTokensComeFrom) {
  for (const bool is_remote : {false, true}) {
    const std::string dir = make_temp_dir(is_remote ? "seam-remote" : "seam-local");
    const GenerationSpec spec = seam_spec(
        dir,
        {{{"prompt", "Once upon a time"}}, {{"prompt", "Tom had a dog"}}, {{"prompt", "Lily"}}},
        is_remote);
    auto fake = std::make_shared<FakeRequestService>();
    auto job = GenerationJob::create(spec, dir + "/job.sluicejob");
    job->load(fake_lease(fake, is_remote));
    const std::vector<RowResult> rows = run_all_rows(*job);
    ASSERT_EQ(rows.size(), 3u) << (is_remote ? "remote" : "local");
    for (const RowResult& row : rows) {
      EXPECT_EQ(row.status, RowStatus::Done);
      ASSERT_EQ(row.samples.size(), 1u);
      const std::string expected =
          FakeRequestService::answer_to(static_cast<uint64_t>(row.row_index), 0);
      EXPECT_EQ(row.samples[0].output, expected);
      EXPECT_EQ(job->store().result(row.row_index)->samples[0].output, expected);
    }
    const std::vector<ServiceRequest> requests = fake->requests();
    ASSERT_EQ(requests.size(), 3u);
    for (const ServiceRequest& request : requests) {
      // A local model gets token ids; text goes to a service that takes text.
      EXPECT_EQ(request.prompt_token_ids.empty(), is_remote);
      EXPECT_EQ(request.messages.empty(), !is_remote);
    }
    EXPECT_EQ(job->service().describe(), "a fake service");
  }
}

// Each row's own schema reaches the service as its source (kind, text as the row holds it, named
// after the file, line and column), and the job compiles nothing itself. Catches a job that
// compiles row schemas (or drops them) instead of handing the service the source.
TEST(JobSeam, ARowsGrammarSourceReachesTheServiceUncompiled) {
  const nlohmann::json object_schema = {{"type", "object"},
                                        {"properties", {{"a", {{"type", "string"}}}}}};
  const std::string text_schema = R"({"type":"string","maxLength":3})";
  for (const bool is_remote : {false, true}) {
    const std::string dir = make_temp_dir("seam-row-grammar");
    GenerationSpec spec = seam_spec(dir,
                                    {{{"prompt", "One"}, {"schema", object_schema}},
                                     {{"prompt", "Two"}, {"schema", text_schema}}},
                                    is_remote);
    spec.schema_column = "schema";
    auto fake = std::make_shared<FakeRequestService>();
    auto job = GenerationJob::create(spec, dir + "/job.sluicejob");
    job->load(fake_lease(fake, is_remote));
    ASSERT_EQ(run_all_rows(*job).size(), 2u);
    const std::vector<ServiceRequest> requests = fake->requests();
    ASSERT_EQ(requests.size(), 2u);
    for (const ServiceRequest& request : requests) {
      ASSERT_TRUE(request.sampling.grammar) << "row " << request.sample_key;
      const GrammarSource& source = *request.sampling.grammar;
      EXPECT_EQ(source.kind, GrammarSourceKind::JsonSchema);
      const size_t line = request.sample_key + 1;
      EXPECT_EQ(source.text, request.sample_key == 0 ? object_schema.dump() : text_schema);
      EXPECT_THAT(source.name, HasSubstr(str_cat("input.jsonl:", line, ": column 'schema'")));
    }
    // The job has no grammar of its own: a local job checks each row's for its notes (the
    // service compiles it), a remote one leaves it to the servers.
    EXPECT_EQ(fake->checked().size(), is_remote ? 0u : 2u);
  }
}

// What the service's compiles ignored or dropped lands in the job: the job's own grammar's at
// load(), and a row schema's once however many rows share it, named after the first; a job file
// opened later still holds them. Catches notes dropped, noted per row, or kept only in memory.
TEST(JobSeam, TheGrammarsNotesLandInTheJobOncePerDistinctGrammar) {
  const std::string dir = make_temp_dir("seam-notes");
  const std::string shared = R"({"type":"string","x-order":1})";
  GenerationSpec spec = seam_spec(dir,
                                  {{{"prompt", "One"}, {"schema", shared}},
                                   {{"prompt", "Two"}, {"schema", shared}},
                                   {{"prompt", "Three"}, {"schema", R"({"type":"integer"})"}}},
                                  false);
  spec.schema_column = "schema";
  auto fake = std::make_shared<FakeRequestService>();
  fake->notes = [](const GrammarSource& source) {
    return source.text.find("x-order") != std::string::npos
               ? std::vector<std::string>{"/x-order: unknown keyword ('x-order' ignored)"}
               : std::vector<std::string>{};
  };
  auto job = GenerationJob::create(spec, dir + "/job.sluicejob");
  job->load(fake_lease(fake, false));
  EXPECT_TRUE(job->grammar_notes().lines().empty());
  ASSERT_EQ(run_all_rows(*job).size(), 3u);
  const std::vector<std::string> expected = {
      "input.jsonl:1: column 'schema': /x-order: unknown keyword ('x-order' ignored)"};
  ASSERT_EQ(job->grammar_notes().lines().size(), 1u);
  EXPECT_THAT(job->grammar_notes().lines()[0], HasSubstr(expected[0]));
  job.reset();
  const auto stored = JobStore::open(dir + "/job.sluicejob");
  ASSERT_EQ(stored->info().grammar_notes.size(), 1u);
  EXPECT_THAT(stored->info().grammar_notes[0], HasSubstr(expected[0]));

  // The job's own grammar: noted at load(), before any row runs.
  const std::string own_dir = make_temp_dir("seam-notes-own");
  GenerationSpec own = seam_spec(own_dir, {{{"prompt", "One"}}}, false);
  own.sampling.grammar = std::make_shared<const GrammarSource>(
      GrammarSource{GrammarSourceKind::JsonSchema, "s.json", shared, {}});
  auto own_job = GenerationJob::create(own, own_dir + "/job.sluicejob");
  own_job->load(fake_lease(fake, false));
  const std::vector<std::string> own_expected = {
      "s.json: /x-order: unknown keyword ('x-order' ignored)"};
  EXPECT_EQ(own_job->grammar_notes().lines(), own_expected);
  EXPECT_EQ(own_job->store().info().grammar_notes, own_expected);
}

// A row whose own grammar the service refuses fails alone, with the service's words; the others
// run. A job whose own grammar the service refuses is refused at load(), before its file exists,
// so nothing is left to resume. Catches a refusal that stops the whole run, and a job file
// created before the grammar was checked.
TEST(JobSeam, AGrammarTheServiceRefusesFailsItsRowOrTheJobBeforeItsFile) {
  const std::string dir = make_temp_dir("seam-refused");
  GenerationSpec spec = seam_spec(dir,
                                  {{{"prompt", "One"}, {"schema", R"({"type":"string"})"}},
                                   {{"prompt", "Two"}, {"schema", R"({"type":"strin"})"}},
                                   {{"prompt", "Three"}, {"schema", R"({"type":"integer"})"}}},
                                  false);
  spec.schema_column = "schema";
  auto fake = std::make_shared<FakeRequestService>();
  fake->refuse = [](const GrammarSource& source) {
    return source.text.find("strin\"") != std::string::npos
               ? str_cat(source.name, ": /type: unknown type 'strin'")
               : std::string();
  };
  auto job = GenerationJob::create(spec, dir + "/job.sluicejob");
  job->load(fake_lease(fake, false));
  const std::vector<RowResult> rows = run_all_rows(*job);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].status, RowStatus::Done);
  EXPECT_EQ(rows[2].status, RowStatus::Done);
  EXPECT_EQ(rows[1].status, RowStatus::Failed);
  EXPECT_THAT(rows[1].error, HasSubstr("input.jsonl:2: column 'schema': /type: unknown type"));
  ASSERT_EQ(rows[1].samples.size(), 1u);
  EXPECT_EQ(rows[1].samples[0].finish_reason, "error");

  // The job's own grammar: checked by its service before the job file is created.
  const std::string refused_dir = make_temp_dir("seam-job-grammar");
  GenerationSpec refused = seam_spec(refused_dir, {{{"prompt", "One"}}}, false);
  refused.sampling.grammar = std::make_shared<const GrammarSource>(
      GrammarSource{GrammarSourceKind::Regex, "--regex", "[a-", {}});
  const std::string refused_path = refused_dir + "/job.sluicejob";
  auto strict = std::make_shared<FakeRequestService>();
  bool was_file_there = true;
  strict->refuse = [&](const GrammarSource& source) {
    was_file_there = std::filesystem::exists(refused_path);
    return str_cat(source.name, ": unterminated character class");
  };
  auto refused_job = GenerationJob::create(refused, refused_path);
  try {
    refused_job->load(fake_lease(strict, false));
    FAIL() << "a job whose grammar its service refuses was loaded";
  } catch (const InvalidGrammar& e) {
    EXPECT_THAT(e.what(), HasSubstr("--regex: unterminated character class"));
  }
  ASSERT_EQ(strict->checked().size(), 1u);
  EXPECT_EQ(strict->checked()[0], *refused.sampling.grammar);
  EXPECT_FALSE(was_file_there) << "the grammar was checked after the job file was created";
  EXPECT_FALSE(std::filesystem::exists(refused_path));
  EXPECT_TRUE(strict->requests().empty());
}

// A job checks that what it is lent fits its spec: a local job needs its model's session, a
// remote one a service that takes text. Catches a job that runs a model's prompts on a service
// it cannot tokenize for.
TEST(JobSeam, ALeaseThatDoesNotFitTheSpecIsRefused) {
  const std::string dir = make_temp_dir("seam-mismatch");
  auto fake = std::make_shared<FakeRequestService>();
  auto local =
      GenerationJob::create(seam_spec(dir, {{{"prompt", "One"}}}, false), dir + "/local.sluicejob");
  EXPECT_THROW(local->load(fake_lease(fake, true)), Error);
  auto remote =
      GenerationJob::create(seam_spec(dir, {{{"prompt", "One"}}}, true), dir + "/remote.sluicejob");
  EXPECT_THROW(remote->load(fake_lease(fake, false)), Error);
  EXPECT_TRUE(fake->requests().empty());
}

}  // namespace
}  // namespace sluice::test
