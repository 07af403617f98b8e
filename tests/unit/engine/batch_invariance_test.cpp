// On the CPU backend a request's tokens are bit-identical whether it runs alone or in a batch
// (ARCHITECTURE.md, "Determinism"), whatever the schedule: whole-file batches, chunked
// prefill, and preemption with recomputation in a pool far too small for the batch.
#include <gtest/gtest.h>

#include "tests/support/reference_data.h"
#include "tests/unit/engine/engine_test_util.h"

namespace sluice::test {
namespace {

constexpr size_t kNumPrompts = 64;

class BatchInvariance : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    model_ = new StoriesModel();
    for (const auto& text : alpaca_prompts(kNumPrompts)) prompts_.push_back(model_->encode(text));
  }
  static void TearDownTestSuite() {
    delete model_;
    model_ = nullptr;
  }

  // Each prompt run alone, one after the other, in a roomy pool.
  static std::map<std::pair<size_t, uint32_t>, FinishedRequest> run_alone(
      const SamplingParams& params) {
    std::map<std::pair<size_t, uint32_t>, FinishedRequest> out;
    for (size_t i = 0; i < prompts_.size(); ++i) {
      auto engine =
          model_->make_engine(EngineConfig{.num_kv_blocks = 64, .check_invariants = true});
      const RequestId id = engine->add_request(prompts_[i], params, i);
      while (engine->has_unfinished()) {
        for (auto& f : engine->step().finished) {
          EXPECT_EQ(f.group_id, id);
          out[{i, f.sample_idx}] = std::move(f);
        }
      }
    }
    return out;
  }

  static void expect_same_tokens(
      const std::map<std::pair<size_t, uint32_t>, FinishedRequest>& batch,
      const std::map<std::pair<size_t, uint32_t>, FinishedRequest>& alone) {
    ASSERT_EQ(batch.size(), alone.size());
    for (const auto& [key, f] : alone) {
      const FinishedRequest& b = batch.at(key);
      EXPECT_EQ(b.output_token_ids, f.output_token_ids)
          << "prompt " << key.first << " sample " << key.second;
      EXPECT_EQ(b.output_text, f.output_text) << "prompt " << key.first;
      EXPECT_EQ(b.finish_reason, f.finish_reason) << "prompt " << key.first;
    }
  }

  static StoriesModel* model_;
  static std::vector<std::vector<int32_t>> prompts_;
};

StoriesModel* BatchInvariance::model_ = nullptr;
std::vector<std::vector<int32_t>> BatchInvariance::prompts_;

SamplingParams greedy() {
  return SamplingParams{.max_tokens = 40};
}
SamplingParams seeded() {
  return SamplingParams{
      .temperature = 0.9f, .top_k = 40, .top_p = 0.95f, .seed = 1234, .max_tokens = 40};
}

TEST_F(BatchInvariance, GreedyWholeFileEqualsAlone) {
  auto engine = model_->make_engine(EngineConfig{.check_invariants = true});
  RunStats stats;
  const auto batch = run_all(*engine, prompts_, greedy(), &stats);
  EXPECT_EQ(stats.max_scheduled_requests, static_cast<int>(kNumPrompts));  // all ran together
  expect_same_tokens(batch, run_alone(greedy()));
}

TEST_F(BatchInvariance, SeededSamplingWholeFileEqualsAlone) {
  auto engine = model_->make_engine(EngineConfig{.check_invariants = true});
  const auto batch = run_all(*engine, prompts_, seeded());
  expect_same_tokens(batch, run_alone(seeded()));
}

// A pool of 24 blocks (384 tokens) for 64 prompts of ~20-90 tokens: constant preemption.
TEST_F(BatchInvariance, TinyPoolWithManyPreemptionsEqualsAlone) {
  auto engine = model_->make_engine(EngineConfig{.num_kv_blocks = 24, .check_invariants = true});
  RunStats stats;
  const auto batch = run_all(*engine, prompts_, seeded(), &stats);
  EXPECT_GT(stats.num_preemptions, 20);
  expect_same_tokens(batch, run_alone(seeded()));
}

// A budget of 7 tokens per step splits every prompt into chunks.
TEST_F(BatchInvariance, ChunkedPrefillEqualsAlone) {
  auto engine = model_->make_engine(
      EngineConfig{.max_num_seqs = 8, .max_num_batched_tokens = 7, .check_invariants = true});
  RunStats stats;
  const auto batch = run_all(*engine, prompts_, greedy(), &stats);
  EXPECT_LE(stats.max_scheduled_tokens, 7);
  EXPECT_LE(stats.max_scheduled_requests, 7);
  expect_same_tokens(batch, run_alone(greedy()));
}

// n samples of each prompt share its prefill and diverge by copy-on-write; in a batch they
// equal the same prompt's n samples run alone.
TEST_F(BatchInvariance, SamplesOfOnePromptEqualAlone) {
  SamplingParams params = seeded();
  params.n = 3;
  auto engine = model_->make_engine(EngineConfig{.check_invariants = true});
  const auto batch = run_all(*engine, prompts_, params);
  EXPECT_EQ(batch.size(), 3 * kNumPrompts);
  const auto alone = run_alone(params);
  expect_same_tokens(batch, alone);
  // The samples differ from each other (seeded draws with different sample indices).
  int num_distinct = 0;
  for (size_t i = 0; i < kNumPrompts; ++i) {
    num_distinct += alone.at({i, 0}).output_token_ids != alone.at({i, 1}).output_token_ids;
  }
  EXPECT_GT(num_distinct, static_cast<int>(kNumPrompts) / 2);
}

// The stories260K reference story, run amid 31 other requests, in a pool that forces
// preemption: still the reference ids.
TEST_F(BatchInvariance, ReferenceStoryThroughTheBatchedPath) {
  std::vector<std::vector<int32_t>> prompts = {reference_prompt_ids()};
  for (size_t i = 0; i < 31; ++i) prompts.push_back(prompts_[i]);
  auto engine = model_->make_engine(EngineConfig{.num_kv_blocks = 40, .check_invariants = true});
  RunStats stats;
  const auto out = run_all(*engine, prompts, SamplingParams{.max_tokens = 252}, &stats);
  EXPECT_GT(stats.num_preemptions, 0);
  EXPECT_EQ(out.at({0, 0}).output_token_ids, reference_generated_ids());
  EXPECT_EQ(out.at({0, 0}).output_text,
            read_file(shared_path("models/stories260K/expected/generated_n256.txt")));
}

}  // namespace
}  // namespace sluice::test
