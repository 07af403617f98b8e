// The CUDA backend's memory and shape arithmetic, on the CPU: the KV budget from
// gpu_memory_utilization, activation sizes, the staged-input layout, graph buckets and the
// padding of decode batches.
#include "engine/backend/cuda/cuda_memory_plan.h"

#include <gtest/gtest.h>

#include "engine/core/error.h"
#include "engine/model/dummy_model.h"

namespace sluice {
namespace {

constexpr size_t kGiB = size_t{1} << 30;
constexpr size_t kMiB = size_t{1} << 20;

TEST(CudaMemoryPlan, PoolTakesWhatIsLeftOfTheBudget) {
  // 80 GiB device, 20 GiB in use (weights + activations + context): 0.9 x 80 - 20 = 52 GiB.
  const CudaMemoryPlan plan = plan_cuda_kv_cache({.device_total_bytes = 80 * kGiB,
                                                  .device_free_bytes = 60 * kGiB,
                                                  .gpu_memory_utilization = 0.9,
                                                  .kv_block_bytes = 2 * kMiB,
                                                  .num_reserved_blocks = 1});
  EXPECT_EQ(plan.budget_bytes, 72 * kGiB);
  EXPECT_EQ(plan.in_use_bytes, 20 * kGiB);
  EXPECT_EQ(plan.num_kv_blocks, static_cast<int>(52 * kGiB / (2 * kMiB)) - 1);  // one padding block
  EXPECT_EQ(plan.kv_cache_bytes, static_cast<size_t>(plan.num_kv_blocks) * 2 * kMiB);
  EXPECT_LE(plan.kv_cache_bytes + 2 * kMiB + plan.in_use_bytes, plan.budget_bytes);
  EXPECT_NE(describe(plan).find("blocks"), std::string::npos);
}

TEST(CudaMemoryPlan, PartialBlocksAreDroppedAndUtilizationOneUsesAllFreeMemory) {
  const CudaMemoryPlan plan = plan_cuda_kv_cache({.device_total_bytes = 1000,
                                                  .device_free_bytes = 999,
                                                  .gpu_memory_utilization = 1.0,
                                                  .kv_block_bytes = 100,
                                                  .num_reserved_blocks = 1});
  EXPECT_EQ(plan.num_kv_blocks, 8);  // 999 / 100 = 9 whole blocks, one kept for padding
  EXPECT_EQ(plan.kv_cache_bytes, 800u);
}

TEST(CudaMemoryPlan, SpentBudgetIsAClearError) {
  // Other processes hold 30 of 40 GiB: 0.5 x 40 = 20 GiB is already exceeded.
  try {
    plan_cuda_kv_cache({.device_total_bytes = 40 * kGiB,
                        .device_free_bytes = 10 * kGiB,
                        .gpu_memory_utilization = 0.5,
                        .kv_block_bytes = kMiB});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--gpu-memory-utilization"), std::string::npos)
        << e.what();
  }
}

TEST(CudaMemoryPlan, BudgetBelowTwoBlocksAndBadUtilizationAreErrors) {
  EXPECT_THROW(plan_cuda_kv_cache({.device_total_bytes = 1000,
                                   .device_free_bytes = 1000,
                                   .gpu_memory_utilization = 0.15,
                                   .kv_block_bytes = 100,
                                   .num_reserved_blocks = 1}),
               Error);  // 150 bytes: one block, none left beside the padding block
  for (const double bad : {0.0, -0.5, 1.01}) {
    EXPECT_THROW(plan_cuda_kv_cache({.device_total_bytes = 1000,
                                     .device_free_bytes = 1000,
                                     .gpu_memory_utilization = bad,
                                     .kv_block_bytes = 10}),
                 Error)
        << bad;
  }
}

TEST(CudaMemoryPlan, ActivationBytesCountEveryBufferAligned) {
  const ModelConfig c = dummy_model_config("llama-3-8b");
  // 2048 tokens of bf16: 3 x hidden + q|k|v (q + 2 x kv) + attention out (q) + gate|up (2 x ffn).
  const size_t per_token = 2 * (3 * 4096 + 2 * 4096 + 2 * 1024 + 2 * 14336);
  const size_t per_row = 2 * 3 * 4096 + 4 * 128256;
  const size_t bytes = cuda_activation_bytes(c, 2, 2048, 256);
  EXPECT_GE(bytes, 2048 * per_token + 256 * per_row);
  EXPECT_LE(bytes, 2048 * per_token + 256 * per_row + 13 * 256);  // alignment only
  EXPECT_EQ(bytes % 256, 0u);
  EXPECT_EQ(cuda_activation_bytes(c, 4, 0, 0), 0u);
  EXPECT_GT(cuda_activation_bytes(c, 4, 1, 1), cuda_activation_bytes(c, 2, 1, 1));
}

// A mixture-of-experts model adds, per token, the router's fp32 input and logits, the choice (ids,
// weights, two row maps) per slot, and per slot (token x top_k) the gathered input, gate|up and
// the fp32 expert output: what carve_forward_buffers takes.
TEST(CudaMemoryPlan, ActivationBytesCountTheMixtureOfExpertsBuffers) {
  ModelConfig c = dummy_model_config("llama-3-8b");
  const size_t dense = cuda_activation_bytes(c, 2, 2048, 256);
  c.num_experts = 128;
  c.num_experts_used = 4;
  c.expert_intermediate_size = 768;
  const size_t slots = 2048 * 4;
  const size_t extra = 2048 * (4 * 4096 + 4 * 128) + slots * (4 + 4 + 2 * 4) +
                       slots * (2 * 4096 + 2 * 2 * 768 + 4 * 4096);
  const size_t bytes = cuda_activation_bytes(c, 2, 2048, 256);
  EXPECT_GE(bytes - dense, extra);
  EXPECT_LE(bytes - dense, extra + 8 * 256);  // alignment only
  EXPECT_EQ(bytes % 256, 0u);
}

// A layer of the KV pool: K then V in the activation type; an FP8 cache adds its scales after
// them. Every part starts 256-byte aligned and they do not overlap.
TEST(CudaKvLayerLayout, Fp8CodesAndScalesAreAlignedAndDisjoint) {
  const ModelConfig config = dummy_model_config("llama-3-8b");  // 8 KV heads of 128
  const size_t slots = 1001;                                    // not a multiple of anything
  const CudaKvLayerLayout bf16 = cuda_kv_layer_layout(config, 2, KvCacheDType::Auto, slots);
  EXPECT_EQ(bf16.k, 0u);
  EXPECT_EQ(bf16.v, (slots * 1024 * 2 + 255) / 256 * 256);
  EXPECT_EQ(bf16.total_bytes, 2 * bf16.v);
  const CudaKvLayerLayout fp8 = cuda_kv_layer_layout(config, 2, KvCacheDType::Fp8, slots);
  const size_t codes = (slots * 1024 + 255) / 256 * 256;
  const size_t scales = (slots * 8 * sizeof(float) + 255) / 256 * 256;
  EXPECT_EQ(fp8.v, codes);
  EXPECT_EQ(fp8.k_scales, 2 * codes);
  EXPECT_EQ(fp8.v_scales, 2 * codes + scales);
  EXPECT_EQ(fp8.total_bytes, 2 * codes + 2 * scales);
  for (const size_t offset : {fp8.v, fp8.k_scales, fp8.v_scales}) EXPECT_EQ(offset % 256, 0u);
  EXPECT_EQ(cuda_kv_bytes_per_token(config, 2, KvCacheDType::Auto), size_t{128} << 10);
  EXPECT_EQ(cuda_kv_bytes_per_token(config, 2, KvCacheDType::Fp8), size_t{2 * 32 * (1024 + 32)});
  EXPECT_EQ(cuda_kv_bytes_per_token(config, 4, KvCacheDType::Fp8),
            cuda_kv_bytes_per_token(config, 2, KvCacheDType::Fp8));  // codes whatever T is
}

TEST(CudaMemoryPlan, BatchLayoutIsAlignedDisjointAndDependsOnCountsOnly) {
  const CudaBatchLayout a = cuda_batch_layout(37, 5, 9, 5);
  const size_t offsets[] = {a.token_ids, a.positions,    a.slot_mapping,   a.query_start_loc,
                            a.seq_lens,  a.block_tables, a.logits_indices, a.total_bytes};
  const size_t sizes[] = {37 * 4, 37 * 4, 37 * 8, 6 * 4, 5 * 4, 5 * 9 * 4, 5 * 4};
  for (size_t i = 0; i < 7; ++i) {
    EXPECT_EQ(offsets[i] % 16, 0u) << i;
    EXPECT_GE(offsets[i + 1], offsets[i] + sizes[i]) << i;
  }
  const CudaBatchLayout b = cuda_batch_layout(37, 5, 9, 5);
  EXPECT_EQ(a.block_tables, b.block_tables);
  EXPECT_EQ(a.total_bytes, b.total_bytes);
}

TEST(CudaGraphBuckets, PowersOfTwoUpToTheBatchCap) {
  EXPECT_EQ(cuda_graph_batch_sizes(1), (std::vector<int>{1}));
  EXPECT_EQ(cuda_graph_batch_sizes(256), (std::vector<int>{1, 2, 4, 8, 16, 32, 64, 128, 256}));
  EXPECT_EQ(cuda_graph_batch_sizes(300).back(), 512);
  const auto sizes = cuda_graph_batch_sizes(256);
  EXPECT_EQ(cuda_graph_batch_bucket(1, sizes), 1);
  EXPECT_EQ(cuda_graph_batch_bucket(3, sizes), 4);
  EXPECT_EQ(cuda_graph_batch_bucket(8, sizes), 8);
  EXPECT_EQ(cuda_graph_batch_bucket(129, sizes), 256);
  EXPECT_EQ(cuda_graph_batch_bucket(257, sizes), 0);  // too large: runs without a graph
}

TEST(CudaGraphBuckets, ContextBucketsArePowersOfTwoCappedAndBlockAligned) {
  EXPECT_EQ(cuda_graph_seq_len_bucket(1, 8192, 16), 256);
  EXPECT_EQ(cuda_graph_seq_len_bucket(256, 8192, 16), 256);
  EXPECT_EQ(cuda_graph_seq_len_bucket(257, 8192, 16), 512);
  EXPECT_EQ(cuda_graph_seq_len_bucket(5000, 8192, 16), 8192);
  EXPECT_EQ(cuda_graph_seq_len_bucket(5000, 6000, 16), 6000);
  EXPECT_EQ(cuda_graph_seq_len_bucket(100, 200, 16), 208);   // capped, then a whole block
  EXPECT_EQ(cuda_graph_seq_len_bucket(300, 4096, 24), 528);  // 512 rounded up to 24s
}

// Three decode requests with contexts 5, 17 and 33 in blocks of 16.
BatchInputs three_decodes() {
  BatchInputs in;
  in.token_ids = {11, 22, 33};
  in.positions = {4, 16, 32};
  in.slot_mapping = {7 * 16 + 4, 3 * 16 + 0, 9 * 16 + 0};
  in.query_start_loc = {0, 1, 2, 3};
  in.seq_lens = {5, 17, 33};
  in.max_blocks_per_request = 3;
  in.block_tables = {7, -1, -1, 2, 3, -1, 8, 1, 9};
  in.logits_indices = {0, 1, 2};
  return in;
}

TEST(CudaDecodePadding, OnlyOneSampledTokenPerRequestIsUniformDecode) {
  BatchInputs in = three_decodes();
  EXPECT_TRUE(is_uniform_decode(in));
  BatchInputs no_logits = in;
  no_logits.logits_indices = {0, 2};  // a one-token prefill chunk that does not sample
  EXPECT_FALSE(is_uniform_decode(no_logits));
  BatchInputs prefill = in;
  prefill.token_ids.push_back(44);
  prefill.positions.push_back(33);
  prefill.slot_mapping.push_back(9 * 16 + 1);
  prefill.query_start_loc.back() = 4;
  prefill.seq_lens.back() = 34;
  prefill.logits_indices.back() = 3;
  EXPECT_FALSE(is_uniform_decode(prefill));
  EXPECT_FALSE(is_uniform_decode(BatchInputs{}));
}

TEST(CudaDecodePadding, PadsToTheBucketWithRowsInThePaddingBlock) {
  const BatchInputs in = three_decodes();
  BatchInputs out;
  pad_decode_batch(in, 8, 4, /*padding_block_id=*/50, /*block_size=*/16, out);
  ASSERT_EQ(out.num_tokens(), 8);
  ASSERT_EQ(out.num_requests(), 8);
  EXPECT_EQ(out.max_blocks_per_request, 4);
  EXPECT_TRUE(is_uniform_decode(out));
  for (int r = 0; r < 3; ++r) {
    const auto i = static_cast<size_t>(r);
    EXPECT_EQ(out.token_ids[i], in.token_ids[i]);
    EXPECT_EQ(out.positions[i], in.positions[i]);
    EXPECT_EQ(out.slot_mapping[i], in.slot_mapping[i]);
    EXPECT_EQ(out.seq_lens[i], in.seq_lens[i]);
  }
  // Real rows keep the blocks their context uses, re-strided to 4.
  EXPECT_EQ(std::vector<int32_t>(out.block_tables.begin(), out.block_tables.begin() + 12),
            (std::vector<int32_t>{7, -1, -1, -1, 2, 3, -1, -1, 8, 1, 9, -1}));
  for (size_t r = 3; r < 8; ++r) {
    EXPECT_EQ(out.token_ids[r], 0);
    EXPECT_EQ(out.positions[r], 0);
    EXPECT_EQ(out.slot_mapping[r], 50 * 16);  // never a request's slot
    EXPECT_EQ(out.seq_lens[r], 1);
    EXPECT_EQ(out.block_tables[r * 4], 50);
    EXPECT_EQ(out.block_tables[r * 4 + 1], -1);
  }
  EXPECT_EQ(out.logits_indices, (std::vector<int32_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(out.query_start_loc, (std::vector<int32_t>{0, 1, 2, 3, 4, 5, 6, 7, 8}));
}

TEST(CudaDecodePadding, SameBucketGivesTheSameLayoutWhateverTheRealCount) {
  BatchInputs two = three_decodes();
  two.token_ids.pop_back();
  two.positions.pop_back();
  two.slot_mapping.pop_back();
  two.query_start_loc.pop_back();
  two.seq_lens.pop_back();
  two.block_tables.resize(6);
  two.logits_indices.pop_back();
  BatchInputs a;
  BatchInputs b;
  pad_decode_batch(three_decodes(), 4, 32, 99, 16, a);
  pad_decode_batch(two, 4, 32, 99, 16, b);
  EXPECT_EQ(a.num_tokens(), b.num_tokens());
  EXPECT_EQ(a.block_tables.size(), b.block_tables.size());
  EXPECT_EQ(a.logits_indices, b.logits_indices);
  const auto la = cuda_batch_layout(a.num_tokens(), a.num_requests(), a.max_blocks_per_request,
                                    static_cast<int>(a.logits_indices.size()));
  const auto lb = cuda_batch_layout(b.num_tokens(), b.num_requests(), b.max_blocks_per_request,
                                    static_cast<int>(b.logits_indices.size()));
  EXPECT_EQ(la.total_bytes, lb.total_bytes);
  EXPECT_EQ(la.logits_indices, lb.logits_indices);
}

}  // namespace
}  // namespace sluice
