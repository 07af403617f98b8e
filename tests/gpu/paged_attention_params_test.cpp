// paged_attention's parameter checks (head sizes, GQA ratios, block sizes, q rows, soft-cap,
// window, workspace, alignment) and the workspace it asks for (split-KV partitions only, sized by
// the context or the window).
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "kernels/paged_attention.cuh"
#include "kernels/paged_attention_tuning.cuh"
#include "tests/gpu/gpu_test_support.h"

namespace sluice::kernels {
namespace {

using test::DeviceBuffer;

PagedAttentionParams valid_params() {
  PagedAttentionParams p;
  p.num_tokens = 1;
  p.num_requests = 1;
  p.num_heads = 8;
  p.num_kv_heads = 4;
  p.head_dim = 64;
  p.block_size = 16;
  p.max_blocks_per_request = 64;
  p.max_query_len = 1;
  p.max_seq_len = 1024;  // two decode partitions: needs a workspace
  p.scale = 0.125f;
  return p;
}

TEST(PagedAttentionParamsTest, RejectsUnsupportedParams) {
  SLUICE_REQUIRE_CUDA();
  DeviceBuffer<float> q(8 * 256), cache(64 * 16 * 4 * 256), out(8 * 256 + 4);
  DeviceBuffer<int32_t> block_tables(64), query_start_loc(std::vector<int32_t>{0, 1}), seq_lens(1),
      positions(1);
  DeviceBuffer<unsigned char> workspace(1 << 20);
  const auto call = [&](const PagedAttentionParams& p, const float* q_ptr = nullptr,
                        size_t workspace_bytes = 1 << 20) {
    return paged_attention<float>(p, q_ptr != nullptr ? q_ptr : q.get(), cache.get(), cache.get(),
                                  block_tables.get(), query_start_loc.get(), seq_lens.get(),
                                  positions.get(), out.get(), workspace.get(), workspace_bytes,
                                  nullptr);
  };
  const KernelStatus invalid = cudaErrorInvalidValue;
  for (const int head_dim : {0, 4, 12, 60, 264, 512}) {
    PagedAttentionParams p = valid_params();
    p.head_dim = head_dim;
    EXPECT_EQ(call(p), invalid) << "head_dim " << head_dim;
  }
  PagedAttentionParams p = valid_params();
  p.num_heads = 6;  // not a multiple of 4 KV heads
  EXPECT_EQ(call(p), invalid);
  p = valid_params();
  p.num_kv_heads = 0;
  EXPECT_EQ(call(p), invalid);
  p = valid_params();
  p.block_size = 0;
  EXPECT_EQ(call(p), invalid);
  p = valid_params();
  p.q_row_stride = 8 * 64 - 8;  // shorter than a row of q
  EXPECT_EQ(call(p), invalid);
  p.q_row_stride = 8 * 64 + 4;  // rows not 16-byte aligned
  EXPECT_EQ(call(p), invalid);
  p = valid_params();
  p.logit_softcap = -1.0f;
  EXPECT_EQ(call(p), invalid) << "negative soft-cap";
  p.logit_softcap = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(call(p), invalid) << "NaN soft-cap";
  p = valid_params();
  p.sliding_window = -1;
  EXPECT_EQ(call(p), invalid) << "negative window";
  p = valid_params();
  EXPECT_EQ(call(p, nullptr, paged_attention_workspace_bytes(p) - 1), invalid)
      << "workspace too small";
  EXPECT_EQ(call(p, q.get() + 1), invalid) << "q not 16-byte aligned";
  p.num_tokens = 0;  // an empty batch has nothing to do
  EXPECT_EQ(call(p), kKernelOk);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

TEST(PagedAttentionParamsTest, WorkspaceOnlyForSplitDecode) {
  SLUICE_REQUIRE_CUDA();
  PagedAttentionParams p = valid_params();
  p.max_seq_len = 512;  // one partition
  EXPECT_EQ(paged_attention_workspace_bytes(p), 0u);
  p.max_seq_len = 513;
  EXPECT_EQ(paged_attention_workspace_bytes(p), size_t{1} * 8 * 2 * (64 + 2) * sizeof(float));
  PagedAttentionTuning tiled;
  tiled.is_decode_tiled = true;
  EXPECT_EQ(paged_attention_workspace_bytes(p, tiled), 0u);
  p.max_seq_len = 1 << 20;  // long contexts grow the partitions (at most 32), not their number
  EXPECT_EQ(paged_attention_workspace_bytes(p), size_t{1} * 8 * 32 * (64 + 2) * sizeof(float));
  p.sliding_window = 1000;  // partitions split the window: two of 512
  EXPECT_EQ(paged_attention_workspace_bytes(p), size_t{1} * 8 * 2 * (64 + 2) * sizeof(float));
  p.sliding_window = 512;  // one
  EXPECT_EQ(paged_attention_workspace_bytes(p), 0u);
}

}  // namespace
}  // namespace sluice::kernels
