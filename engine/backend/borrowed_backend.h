// Lends one backend to a series of engines (each Engine owns its backend), so weights are
// uploaded once for a sweep of runs. Every call, device sampling included, goes to the lender,
// which must outlive the engines, but for the memory plan: the lender's owner plans it before
// each engine (fit_engine_to_backend on the lender), and an engine over a borrowed backend sizes
// its pool from its config alone (determine_available_memory returns 0).
#pragma once

#include <string>

#include "engine/backend/backend.h"

namespace sluice {

class BorrowedBackend final : public Backend {
 public:
  explicit BorrowedBackend(Backend& backend) : backend_(backend) {}

  std::string name() const override { return backend_.name(); }
  std::string describe() const override { return backend_.describe(); }
  size_t kv_block_bytes(int block_size) const override {
    return backend_.kv_block_bytes(block_size);
  }
  void allocate_kv_cache(int num_blocks, int block_size) override {
    backend_.allocate_kv_cache(num_blocks, block_size);
  }
  void copy_blocks(std::span<const int32_t> src, std::span<const int32_t> dst) override {
    backend_.copy_blocks(src, dst);
  }
  size_t state_slot_bytes() const override { return backend_.state_slot_bytes(); }
  void allocate_state_slots(int num_slots) override { backend_.allocate_state_slots(num_slots); }
  void copy_state_slots(std::span<const int32_t> src, std::span<const int32_t> dst) override {
    backend_.copy_state_slots(src, dst);
  }
  void forward(const BatchInputs& inputs, std::vector<float>& logits) override {
    backend_.forward(inputs, logits);
  }
  BackendMemory memory() const override { return backend_.memory(); }
  int default_max_num_batched_tokens() const override {
    return backend_.default_max_num_batched_tokens();
  }
  bool samples_on_device() const override { return backend_.samples_on_device(); }
  void forward_and_sample(const BatchInputs& inputs, std::span<const SampleRow> rows,
                          TokenMaskSource* masks, std::vector<int32_t>& token_ids,
                          std::vector<TokenLogprobs>& logprobs) override {
    backend_.forward_and_sample(inputs, rows, masks, token_ids, logprobs);
  }

  Backend& lender() { return backend_; }

 private:
  Backend& backend_;
};

}  // namespace sluice
