// The engine's device-sampling path (Backend::forward_and_sample), proven on the CPU: a backend
// that "samples on its device" with the host Sampler must give every request exactly the tokens
// the host path gives, with the rows handed to it in batch order, n > 1 forks must still share
// their prompt's logits, and grammar rows must sample there too with the masks the engine hands
// over (applied here as the CUDA sampler applies its bitmask).
#include <gtest/gtest.h>

#include <limits>
#include <map>

#include "engine/grammar/choice_grammar.h"
#include "engine/grammar/json_schema_grammar.h"
#include "tests/unit/engine/engine_test_util.h"

namespace sluice::test {
namespace {

// CpuBackend plus sampling "on the device": forward, then the host Sampler per row.
class DeviceSamplingCpuBackend final : public Backend {
 public:
  explicit DeviceSamplingCpuBackend(const Model& model)
      : cpu_(model, CpuBackendOptions{.num_threads = 2}), vocab_size_(model.config.vocab_size) {}

  std::string name() const override { return "cpu+device-sampling"; }
  size_t kv_block_bytes(int block_size) const override { return cpu_.kv_block_bytes(block_size); }
  void allocate_kv_cache(int num_blocks, int block_size) override { cpu_.allocate_kv_cache(num_blocks, block_size); }
  void copy_blocks(std::span<const int32_t> src, std::span<const int32_t> dst) override { cpu_.copy_blocks(src, dst); }
  void forward(const BatchInputs& inputs, std::vector<float>& logits) override {
    ++num_logits_steps;
    cpu_.forward(inputs, logits);
  }
  BackendMemory memory() const override { return cpu_.memory(); }
  bool samples_on_device() const override { return true; }

  void forward_and_sample(const BatchInputs& inputs, std::span<const SampleRow> rows,
                          TokenMaskSource* masks, std::vector<int32_t>& token_ids,
                          std::vector<TokenLogprobs>& logprobs) override {
    ++num_device_steps;
    EXPECT_EQ(rows.size(), inputs.logits_indices.size());
    cpu_.forward(inputs, logits_);
    token_ids.clear();
    logprobs.assign(rows.size(), TokenLogprobs{});
    for (size_t i = 0; i < rows.size(); ++i) {
      // The row's last context token is the token whose logits row i holds.
      const auto& c = rows[i].context;
      const int32_t last = c.output_token_ids.empty() ? c.prompt_token_ids.back() : c.output_token_ids.back();
      EXPECT_EQ(inputs.token_ids[static_cast<size_t>(inputs.logits_indices[i])], last);
      const std::span<float> row(logits_.data() + i * static_cast<size_t>(vocab_size_), static_cast<size_t>(vocab_size_));
      const std::vector<float> raw(row.begin(), row.end());  // before mask and sampler
      if (rows[i].is_masked) {
        ++num_masked_rows;
        std::vector<uint32_t> words(static_cast<size_t>(vocab_size_ + 31) / 32, 0u);
        if (masks->fill(i, words) == 0) {
          token_ids.push_back(-1);
          continue;
        }
        for (int id = 0; id < vocab_size_; ++id) {
          if (((words[static_cast<size_t>(id) / 32] >> (id % 32)) & 1u) == 0)
            row[static_cast<size_t>(id)] = -std::numeric_limits<float>::infinity();
        }
      }
      token_ids.push_back(sampler_.sample(row, *rows[i].params, c));
      if (rows[i].params->logprobs >= 0) {
        ++num_logprob_rows;
        logprobs[i] = token_logprobs(raw, token_ids.back(), rows[i].params->logprobs);
      }
    }
  }

  int num_device_steps = 0;
  int num_logits_steps = 0;
  int num_masked_rows = 0;
  int num_logprob_rows = 0;

 private:
  CpuBackend cpu_;
  int vocab_size_;
  Sampler sampler_;
  std::vector<float> logits_;
};

using Outputs = std::map<std::pair<RequestId, uint32_t>, std::vector<int32_t>>;

// Runs prompts with per-prompt parameters; keys the outputs by (add order, sample index).
// grammars: each prompt's compiled grammar (null: free text); none given: every prompt is free.
Outputs run(Engine& engine, const std::vector<std::vector<int32_t>>& prompts,
            const std::vector<SamplingParams>& params,
            const std::vector<std::shared_ptr<const Grammar>>& grammars = {}) {
  std::map<RequestId, RequestId> order;
  for (size_t i = 0; i < prompts.size(); ++i)
    order[engine.add_request(prompts[i], params[i], 1000 + i,
                             grammars.empty() ? nullptr : grammars[i])] = i;
  Outputs out;
  while (engine.has_unfinished()) {
    for (auto& f : engine.step().finished) out[{order.at(f.group_id), f.sample_idx}] = f.output_token_ids;
  }
  return out;
}

std::vector<SamplingParams> mixed_params(size_t count) {
  std::vector<SamplingParams> out;
  for (size_t i = 0; i < count; ++i) {
    SamplingParams p{.seed = i % 3, .max_tokens = 24 + static_cast<int>(i % 7) * 5};
    switch (i % 4) {
      case 0: break;  // greedy
      case 1: p.temperature = 0.9f; p.top_p = 0.9f; break;
      case 2: p.temperature = 1.1f; p.top_k = 20; p.repetition_penalty = 1.3f; break;
      case 3: p.temperature = 0.7f; p.min_p = 0.05f; p.frequency_penalty = 0.5f; p.presence_penalty = 0.3f; break;
    }
    out.push_back(p);
  }
  return out;
}

// Runs the prompts on the host path and on the fake device (same config) and returns both
// outputs with what the device saw.
struct HostAndDevice {
  Outputs host, device;
  int num_device_steps = 0, num_logits_steps = 0, num_masked_rows = 0;
  size_t num_masks = 0;  // masks the engine built
};

HostAndDevice run_host_and_device(
    StoriesModel& model, const std::vector<std::vector<int32_t>>& prompts,
    const std::vector<SamplingParams>& params,
    const std::vector<std::shared_ptr<const Grammar>>& grammars = {}) {
  const EngineConfig config{.max_num_batched_tokens = 256, .check_invariants = true};
  HostAndDevice out;
  out.host = run(*model.make_engine(config), prompts, params, grammars);
  auto backend = std::make_unique<DeviceSamplingCpuBackend>(*model.session.model);
  DeviceSamplingCpuBackend* device = backend.get();
  Engine engine(model.session.model->config, *model.session.tokenizer, std::move(backend), config);
  out.device = run(engine, prompts, params, grammars);
  out.num_device_steps = device->num_device_steps;
  out.num_logits_steps = device->num_logits_steps;
  out.num_masked_rows = device->num_masked_rows;
  out.num_masks = engine.grammar_constraints().mask_times_us().size();
  return out;
}

TEST(DeviceSampling, EngineGivesTheHostPathsTokensWithRowsInBatchOrder) {
  StoriesModel model;
  const auto texts = alpaca_prompts(40);
  std::vector<std::vector<int32_t>> prompts;
  for (const auto& t : texts) prompts.push_back(model.encode(t));
  const auto params = mixed_params(prompts.size());

  const HostAndDevice r = run_host_and_device(model, prompts, params);
  EXPECT_EQ(r.device, r.host);
  EXPECT_GT(r.num_device_steps, 10);
  EXPECT_EQ(r.num_logits_steps, 0);  // no fork: every step sampled on the "device"
}

// A prompt forking into n samples draws all n on the device from its one logits row (the row
// repeated in the batch's logits indices), with the host path's tokens: no step goes back to host
// logits.
TEST(DeviceSampling, ForkStepsSampleEverySampleOnTheDeviceAndMatch) {
  StoriesModel model;
  std::vector<std::vector<int32_t>> prompts = {model.encode("Once upon a time"), model.encode("The dog")};
  std::vector<SamplingParams> params(2, SamplingParams{.n = 3, .temperature = 1.0f, .seed = 5, .max_tokens = 30});
  params[1].n = 1;

  auto host = model.make_engine(EngineConfig{.check_invariants = true});
  const Outputs expected = run(*host, prompts, params);
  ASSERT_EQ(expected.size(), 4u);

  auto backend = std::make_unique<DeviceSamplingCpuBackend>(*model.session.model);
  DeviceSamplingCpuBackend* device = backend.get();
  Engine engine(model.session.model->config, *model.session.tokenizer, std::move(backend),
                EngineConfig{.check_invariants = true});
  EXPECT_EQ(run(engine, prompts, params), expected);
  EXPECT_EQ(device->num_logits_steps, 0);
  EXPECT_GT(device->num_device_steps, 10);
}

// Grammar rows sample on the device too (with the masks the engine hands over while the forward
// pass runs), beside free rows, and give the host path's tokens; an n = 2 constrained prompt
// forks on the device, both samples under the parent's mask.
TEST(DeviceSampling, ConstrainedRowsSampleOnTheDeviceWithTheHostPathsTokens) {
  StoriesModel model;
  const auto texts = alpaca_prompts(24);
  std::vector<std::vector<int32_t>> prompts;
  for (const auto& t : texts) prompts.push_back(model.encode(t));
  auto schema = std::make_shared<const Grammar>(json_schema_grammar(
      R"({"type":"object","properties":{"name":{"type":"string","maxLength":6},
          "mood":{"enum":["happy","sad"]}},"required":["name","mood"]})",
      "schema.json"));
  auto choice =
      std::make_shared<const Grammar>(choice_grammar({" yes", " no", " maybe"}, "choice"));
  auto params = mixed_params(prompts.size());
  std::vector<std::shared_ptr<const Grammar>> grammars(params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    if (i % 3 == 0) grammars[i] = schema;
    if (i % 3 == 1) grammars[i] = choice;
    params[i].max_tokens = 60;
  }
  params[3].n = 2;  // a constrained fork

  const HostAndDevice r = run_host_and_device(model, prompts, params, grammars);
  EXPECT_EQ(r.device, r.host);
  EXPECT_GT(r.num_device_steps, 10);
  EXPECT_GT(r.num_masked_rows, 100);
  EXPECT_EQ(r.num_logits_steps, 0);
  EXPECT_GT(r.num_masks, 100u);
}

// Rows that ask for log-probabilities sample on the device too: every step stays there, and each
// token's log-probabilities are the ones the host path reports.
TEST(DeviceSampling, LogprobRowsStayOnTheDeviceWithTheHostPathsLogprobs) {
  StoriesModel model;
  const auto texts = alpaca_prompts(12);
  std::vector<std::vector<int32_t>> prompts;
  for (const auto& t : texts) prompts.push_back(model.encode(t));
  auto params = mixed_params(prompts.size());
  for (size_t i = 0; i < params.size(); ++i) params[i].logprobs = i % 2 == 0 ? static_cast<int>(i % 6) : -1;
  const EngineConfig config{.max_num_batched_tokens = 256, .check_invariants = true};
  using Logprobs = std::map<RequestId, std::vector<TokenLogprobs>>;
  const auto run_logprobs = [&](Engine& engine) {
    std::map<RequestId, RequestId> order;
    for (size_t i = 0; i < prompts.size(); ++i) order[engine.add_request(prompts[i], params[i], 1000 + i)] = i;
    Logprobs out;
    while (engine.has_unfinished()) {
      for (auto& f : engine.step().finished) out[order.at(f.group_id)] = f.output_logprobs;
    }
    return out;
  };
  const Logprobs host = run_logprobs(*model.make_engine(config));
  auto backend = std::make_unique<DeviceSamplingCpuBackend>(*model.session.model);
  DeviceSamplingCpuBackend* device = backend.get();
  Engine engine(model.session.model->config, *model.session.tokenizer, std::move(backend), config);
  const Logprobs on_device = run_logprobs(engine);
  EXPECT_EQ(device->num_logits_steps, 0) << "no step went back to host logits";
  EXPECT_GT(device->num_logprob_rows, 0);
  ASSERT_EQ(on_device.size(), host.size());
  for (const auto& [i, expected] : host) {
    EXPECT_EQ(on_device.at(i), expected) << "prompt " << i;
    EXPECT_EQ(expected.empty(), params[i].logprobs < 0) << "prompt " << i;
  }
}

TEST(DeviceSampling, DisabledByConfigUsesHostLogits) {
  StoriesModel model;
  auto backend = std::make_unique<DeviceSamplingCpuBackend>(*model.session.model);
  DeviceSamplingCpuBackend* device = backend.get();
  Engine engine(model.session.model->config, *model.session.tokenizer, std::move(backend),
                EngineConfig{.sample_on_device = false});
  run(engine, {model.encode("Once upon a time")}, {SamplingParams{.max_tokens = 8}});
  EXPECT_EQ(device->num_device_steps, 0);
  EXPECT_GT(device->num_logits_steps, 0);
}

}  // namespace
}  // namespace sluice::test
