// ModelRunner and a hybrid model's state slots: build_batch_inputs names each request's slot
// (none for a model without state), and execute applies the step's state copies before the
// forward pass, beside the block copies.
#include "engine/runner/model_runner.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sluice {
namespace {

// Records what the runner asks, in order.
class RecordingStateBackend final : public Backend {
 public:
  std::string name() const override { return "recording"; }
  size_t kv_block_bytes(int) const override { return 1; }
  void allocate_kv_cache(int, int) override {}
  void copy_blocks(std::span<const int32_t> src, std::span<const int32_t> dst) override {
    calls.push_back("blocks " + pairs(src, dst));
  }
  void copy_state_slots(std::span<const int32_t> src, std::span<const int32_t> dst) override {
    calls.push_back("states " + pairs(src, dst));
  }
  void forward(const BatchInputs& inputs, std::vector<float>& logits) override {
    calls.push_back("forward");
    state_slots = inputs.state_slots;
    logits.assign(inputs.logits_indices.size() * 4, 0.0f);
  }
  BackendMemory memory() const override { return {}; }

  std::vector<std::string> calls;
  std::vector<int32_t> state_slots;

 private:
  static std::string pairs(std::span<const int32_t> src, std::span<const int32_t> dst) {
    std::string text;
    for (size_t i = 0; i < src.size(); ++i)
      text += std::to_string(src[i]) + ">" + std::to_string(dst[i]) + " ";
    return text;
  }
};

SchedulerOutput two_request_step(int32_t first_slot, int32_t second_slot) {
  SchedulerOutput step;
  step.requests.push_back(ScheduledRequest{.request_id = 1,
                                           .num_computed_tokens = 0,
                                           .num_scheduled_tokens = 3,
                                           .token_ids = {5, 6, 7},
                                           .block_table = {0},
                                           .needs_sample = true,
                                           .is_prefill = true,
                                           .state_slot = first_slot});
  step.requests.push_back(ScheduledRequest{.request_id = 2,
                                           .num_computed_tokens = 4,
                                           .num_scheduled_tokens = 1,
                                           .token_ids = {9},
                                           .block_table = {1, 2},
                                           .needs_sample = true,
                                           .state_slot = second_slot});
  step.total_num_scheduled_tokens = 4;
  return step;
}

TEST(ModelRunnerState, EachRequestNamesItsSlot) {
  BatchInputs in;
  build_batch_inputs(two_request_step(4, 1), 4, in);
  EXPECT_EQ(in.state_slots, (std::vector<int32_t>{4, 1}));
  // A step of a model without state names none, also after one that did (the buffer is reused).
  build_batch_inputs(two_request_step(-1, -1), 4, in);
  EXPECT_TRUE(in.state_slots.empty());
}

TEST(ModelRunnerState, StateCopiesComeBeforeTheForwardPass) {
  RecordingStateBackend backend;
  ModelRunner runner(backend, 4, 4);
  SchedulerOutput step = two_request_step(4, 1);
  step.block_copies = {BlockCopy{2, 3}};
  step.state_copies = {StateCopy{0, 4}, StateCopy{2, 1}};
  RunnerOutput out;
  runner.execute(step, out);
  EXPECT_EQ(backend.calls, (std::vector<std::string>{"blocks 2>3 ", "states 0>4 2>1 ", "forward"}));
  EXPECT_EQ(backend.state_slots, (std::vector<int32_t>{4, 1}));
  // A step without state copies asks for none.
  backend.calls.clear();
  runner.execute(two_request_step(4, 1), out);
  EXPECT_EQ(backend.calls, (std::vector<std::string>{"forward"}));
}

}  // namespace
}  // namespace sluice
