#include "app/cli/bench_runner.h"

#include <gtest/gtest.h>

#include "tests/unit/engine/engine_test_util.h"

namespace sluice::test {
namespace {

TEST(BenchRunner, ModesGenerateTheSameTokensWithTheirOwnBatching) {
  StoriesModel model;
  std::vector<std::vector<int32_t>> prompts;
  for (const auto& text : alpaca_prompts(20)) prompts.push_back(model.encode(text));
  cli::BenchSpec spec;
  spec.engine.num_kv_blocks = 200;
  spec.sampling.max_tokens = 10;
  spec.sampling.ignore_eos = true;
  spec.static_batch = 8;
  spec.num_threads = 2;
  const auto seq = cli::run_bench_mode(cli::BenchMode::Sequential, model.session, prompts, spec);
  const auto stat = cli::run_bench_mode(cli::BenchMode::Static, model.session, prompts, spec);
  const auto cont = cli::run_bench_mode(cli::BenchMode::Continuous, model.session, prompts, spec);
  for (const auto* r : {&seq, &stat, &cont}) {
    EXPECT_EQ(r->output_tokens, 20 * 10);
    EXPECT_EQ(r->num_requests, 20u);
    EXPECT_GE(r->kv_reserved_over_used, 1.0);
    EXPECT_GE(r->kv_reserved_over_used_at_peak, 1.0);
    EXPECT_GT(r->wall_s, 0.0);
  }
  EXPECT_DOUBLE_EQ(seq.mean_batch, 1.0);
  EXPECT_EQ(seq.num_steps, 20 * 10);  // one prefill step that samples, then 9 decodes, per row
  EXPECT_LE(stat.mean_batch, 8.0);
  EXPECT_GT(cont.mean_batch, stat.mean_batch);
  EXPECT_LT(cont.num_steps, stat.num_steps);
  EXPECT_GT(cont.peak_kv_blocks, stat.peak_kv_blocks);
  EXPECT_GT(cont.naive_reserved_bytes, cont.peak_kv_reserved_bytes);
}

}  // namespace
}  // namespace sluice::test
