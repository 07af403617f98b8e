// validate_batch_inputs, the one check of a batch both backends run before their forward pass:
// a well-formed batch passes, and each malformed field either backend's own check used to refuse
// is refused with a message naming it.
#include "engine/backend/batch_inputs.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "engine/core/error.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

constexpr BatchLimits kBatchLimits{.vocab_size = 100,
                                   .max_position_embeddings = 64,
                                   .num_blocks = 8,
                                   .block_size = 4,
                                   .kv_window = 0};

// Two requests: a prefill of 3 tokens at positions 0..2 (blocks 0) and a decode at position 5
// (blocks 1, 2), tables padded to 3 entries with -1.
BatchInputs two_request_batch() {
  BatchInputs in;
  in.token_ids = {5, 6, 7, 8};
  in.positions = {0, 1, 2, 5};
  in.slot_mapping = {0, 1, 2, 9};
  in.query_start_loc = {0, 3, 4};
  in.seq_lens = {3, 6};
  in.max_blocks_per_request = 3;
  in.block_tables = {0, -1, -1, 1, 2, -1};
  in.logits_indices = {2, 3};
  return in;
}

std::string refusal(const BatchInputs& in, const BatchLimits& limits = kBatchLimits) {
  try {
    validate_batch_inputs(in, limits);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(ValidateBatchInputs, AcceptsAWellFormedBatch) {
  EXPECT_NO_THROW(validate_batch_inputs(two_request_batch(), kBatchLimits));
  EXPECT_NO_THROW(validate_batch_inputs(BatchInputs{.query_start_loc = {0}}, kBatchLimits));
}

TEST(ValidateBatchInputs, RefusesABatchBeforeThePoolIsAllocated) {
  BatchLimits limits = kBatchLimits;
  limits.num_blocks = 0;
  EXPECT_THAT(refusal(two_request_batch(), limits), HasSubstr("before the KV cache"));
}

TEST(ValidateBatchInputs, RefusesFieldsOfDisagreeingSizes) {
  const std::vector<std::function<void(BatchInputs&)>> breaks = {
      [](BatchInputs& in) { in.positions.pop_back(); },
      [](BatchInputs& in) { in.slot_mapping.push_back(3); },
      [](BatchInputs& in) { in.query_start_loc.pop_back(); },
      [](BatchInputs& in) { in.query_start_loc.front() = 1; },
      [](BatchInputs& in) { in.query_start_loc.back() = 3; },
      [](BatchInputs& in) { in.block_tables.pop_back(); },
      [](BatchInputs& in) { in.max_blocks_per_request = 2; },
  };
  for (size_t i = 0; i < breaks.size(); ++i) {
    BatchInputs in = two_request_batch();
    breaks[i](in);
    EXPECT_THAT(refusal(in), HasSubstr("malformed batch")) << "break " << i;
  }
}

TEST(ValidateBatchInputs, RefusesTokensOutsideTheVocabularyContextOrPool) {
  const std::pair<std::function<void(BatchInputs&)>, const char*> breaks[] = {
      {[](BatchInputs& in) { in.token_ids[1] = 100; }, "token id 100 is outside the vocabulary"},
      {[](BatchInputs& in) { in.token_ids[1] = -1; }, "token id -1"},
      {[](BatchInputs& in) { in.positions[3] = 64; }, "position 64 is past the model's context"},
      {[](BatchInputs& in) { in.positions[0] = -1; }, "position -1"},
      // 8 blocks of 4 slots.
      {[](BatchInputs& in) { in.slot_mapping[2] = 32; }, "KV slot 32 is outside the pool"},
      {[](BatchInputs& in) { in.slot_mapping[2] = -1; }, "KV slot -1"},
  };
  for (const auto& [broken, message] : breaks) {
    BatchInputs in = two_request_batch();
    broken(in);
    EXPECT_THAT(refusal(in), HasSubstr(message));
  }
}

TEST(ValidateBatchInputs, RefusesAContextThatDoesNotCoverItsTokensOrFitItsTable) {
  BatchInputs in = two_request_batch();
  in.seq_lens[0] = 2;  // 3 new tokens
  EXPECT_THAT(refusal(in), HasSubstr("request 0 of the batch: context 2 for 3 new tokens"));
  in = two_request_batch();
  in.seq_lens[1] = 13;  // 4 blocks of 4, in a table of 3
  EXPECT_THAT(refusal(in), HasSubstr("request 1 of the batch: context 13"));
  in = two_request_batch();
  in.query_start_loc = {0, 5, 4};  // request 1 would own -1 tokens
  in.seq_lens[0] = 5;
  in.block_tables[1] = 3;
  EXPECT_THAT(refusal(in), HasSubstr("request 1 of the batch"));
}

TEST(ValidateBatchInputs, RefusesBlocksOutsideThePoolUsedOrPadding) {
  BatchInputs in = two_request_batch();
  in.block_tables[4] = 8;
  EXPECT_THAT(refusal(in), HasSubstr("block id 8 is outside the pool (8 blocks)"));
  in = two_request_batch();
  in.block_tables[4] = -1;  // a block the decode reads
  EXPECT_THAT(refusal(in), HasSubstr("block id -1"));
  in = two_request_batch();
  in.block_tables[5] = 9;  // padding, but not a block of the pool
  EXPECT_THAT(refusal(in), HasSubstr("block id 9"));
}

// With a window of 2, the decode at position 5 sees positions 4 and 5 only (block 1): block 0
// of its table may have been given back, block 1 may not.
TEST(ValidateBatchInputs, AcceptsGivenBackBlocksOnlyBeforeTheWindow) {
  BatchLimits windowed = kBatchLimits;
  windowed.kv_window = 2;
  BatchInputs in = two_request_batch();
  in.block_tables[3] = -1;
  EXPECT_NO_THROW(validate_batch_inputs(in, windowed));
  EXPECT_THAT(refusal(in), HasSubstr("block id -1"));  // no window: block 0 is read
  in.block_tables[4] = -1;
  EXPECT_THAT(refusal(in, windowed), HasSubstr("block id -1"));
}

TEST(ValidateBatchInputs, RefusesLogitsRowsThatNameNoToken) {
  BatchInputs in = two_request_batch();
  in.logits_indices[1] = 4;
  EXPECT_THAT(refusal(in), HasSubstr("logits row 4 of 4 tokens"));
  in.logits_indices[1] = -1;
  EXPECT_THAT(refusal(in), HasSubstr("logits row -1"));
}

}  // namespace
}  // namespace sluice
