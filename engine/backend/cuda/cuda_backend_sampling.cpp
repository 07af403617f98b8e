// CudaBackend's sampling on the device (forward_and_sample): the rows' parameters, penalties and
// grammar masks staged beside the forward pass, the tokens drawn by kernels/sampling, and the
// log-probabilities rows ask for computed from a copy of the raw logits (kernels/logprobs).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>

#include "engine/backend/cuda/cuda_backend_impl.h"
#include "kernels/sampling.cuh"

namespace sluice {

namespace {

size_t align_16_bytes(size_t bytes) {
  return (bytes + 15) & ~size_t{15};
}

}  // namespace

void CudaBackend::Impl::ensure_logprob_buffers() {
  const auto rows = static_cast<size_t>(capacity_rows);
  if (raw_logits.get() && raw_logits.bytes() >= rows * config.vocab_size * sizeof(float)) return;
  synchronize();
  raw_logits.reset();
  raw_logits = DeviceBuffer(rows * static_cast<size_t>(config.vocab_size) * sizeof(float),
                            "the raw logits kept for log-probabilities");
  logprob_results = DeviceBuffer(rows * kLogprobWords * sizeof(uint32_t), "log-probabilities");
  logprob_results_host = PinnedBuffer(rows * kLogprobWords * sizeof(uint32_t));
}

void CudaBackend::Impl::ensure_sampling_workspace(size_t bytes) {
  if (bytes <= sampling_workspace.bytes() && sampling_workspace.get()) return;
  synchronize();
  sampling_workspace.reset();
  sampling_workspace = DeviceBuffer(std::max<size_t>(bytes, 256), "the sampling workspace");
}

void CudaBackend::forward_and_sample(const BatchInputs& inputs, std::span<const CudaSampleRow> rows,
                                     TokenMaskSource* masks, std::vector<int32_t>& token_ids,
                                     std::vector<TokenLogprobs>& logprobs) {
  Impl& s = *impl_;
  if (rows.size() != inputs.logits_indices.size())
    fail("GPU sampling: ", rows.size(), " rows for ", inputs.logits_indices.size(), " logits rows");
  pack_sampling_rows(rows, s.config.vocab_size, s.packed_rows);
  const PackedSamplingRows& p = s.packed_rows;
  if (!p.masked_rows.empty() && masks == nullptr) fail("GPU sampling: masked rows but no masks");
  make_device_current(s.options.device_index);
  const int num_rows = s.enqueue_step(inputs);
  token_ids.resize(static_cast<size_t>(num_rows));
  logprobs.assign(static_cast<size_t>(num_rows), TokenLogprobs{});
  if (num_rows == 0) {
    s.synchronize();
    return;
  }
  const size_t workspace_bytes = kernels::sampling_workspace_bytes(num_rows, s.config.vocab_size);
  s.ensure_sampling_workspace(workspace_bytes);
  const size_t rows_bytes = align_16_bytes(p.rows.size() * sizeof(kernels::SamplingRow));
  const size_t ids_bytes = align_16_bytes(p.penalty_token_ids.size() * sizeof(int32_t));
  const size_t mask_words = static_cast<size_t>(kernels::mask_words(s.config.vocab_size));
  const size_t masks_offset = rows_bytes + 2 * ids_bytes;
  s.num_top.clear();
  for (const CudaSampleRow& row : rows) s.num_top.push_back(row.params->logprobs);
  const bool wants_logprobs =
      std::any_of(s.num_top.begin(), s.num_top.end(), [](int32_t n) { return n >= 0; });
  const size_t num_top_offset =
      masks_offset + align_16_bytes(p.masked_rows.size() * mask_words * sizeof(uint32_t));
  const size_t total = num_top_offset + (wants_logprobs ? s.num_top.size() * sizeof(int32_t) : 0);
  s.sampling_staging.reserve_device(total, "sampling parameters");
  unsigned char* host = s.sampling_staging.acquire(total);
  std::memcpy(host, p.rows.data(), p.rows.size() * sizeof(kernels::SamplingRow));
  if (!p.penalty_token_ids.empty()) {
    std::memcpy(host + rows_bytes, p.penalty_token_ids.data(),
                p.penalty_token_ids.size() * sizeof(int32_t));
    std::memcpy(host + rows_bytes + ids_bytes, p.penalty_output_counts.data(),
                p.penalty_output_counts.size() * sizeof(int32_t));
  }
  // The grammar masks are built here, while the forward pass runs on the device.
  auto* host_masks = reinterpret_cast<uint32_t*>(host + masks_offset);
  s.rows_masked_empty.assign(static_cast<size_t>(num_rows), false);
  for (size_t m = 0; m < p.masked_rows.size(); ++m) {
    const std::span<uint32_t> words(host_masks + m * mask_words, mask_words);
    std::fill(words.begin(), words.end(), 0u);
    if (masks->fill(p.masked_rows[m], words) == 0) s.rows_masked_empty[p.masked_rows[m]] = true;
  }
  s.counters.num_masked_rows += static_cast<int64_t>(p.masked_rows.size());
  if (wants_logprobs)
    std::memcpy(host + num_top_offset, s.num_top.data(), s.num_top.size() * sizeof(int32_t));
  const auto* device =
      static_cast<const unsigned char*>(s.sampling_staging.commit(total, s.stream->get()));
  // The raw logits, before the sampler penalises and masks them in place.
  const size_t logits_bytes = static_cast<size_t>(num_rows) * s.config.vocab_size * sizeof(float);
  if (wants_logprobs) {
    s.ensure_logprob_buffers();
    SLUICE_CUDA_CHECK(cudaMemcpyAsync(s.raw_logits.get(), s.buffers.logits, logits_bytes,
                                      cudaMemcpyDeviceToDevice, s.stream->get()));
  }
  SLUICE_KERNEL_CHECK(kernels::sample_tokens(
      s.buffers.logits, reinterpret_cast<const kernels::SamplingRow*>(device),
      reinterpret_cast<const int32_t*>(device + rows_bytes),
      reinterpret_cast<const int32_t*>(device + rows_bytes + ids_bytes),
      p.masked_rows.empty() ? nullptr : reinterpret_cast<const uint32_t*>(device + masks_offset),
      s.sampled_tokens.as<int32_t>(), num_rows, s.config.vocab_size, s.sampling_workspace.get(),
      s.sampling_workspace.bytes(), s.stream->get()));
  const size_t token_bytes = static_cast<size_t>(num_rows) * sizeof(int32_t);
  SLUICE_CUDA_CHECK(cudaMemcpyAsync(s.sampled_tokens_host.data(), s.sampled_tokens.get(),
                                    token_bytes, cudaMemcpyDeviceToHost, s.stream->get()));
  const size_t rows_n = static_cast<size_t>(num_rows);
  auto* results = s.logprob_results.as<uint32_t>();
  if (wants_logprobs) {
    // Per row: the chosen token's log-probability, then kMaxTopLogprobs ids and log-probabilities.
    float* chosen_lp = reinterpret_cast<float*>(results);
    auto* top_ids = reinterpret_cast<int32_t*>(results + rows_n);
    float* top_lp = reinterpret_cast<float*>(results + rows_n * (1 + kernels::kMaxTopLogprobs));
    SLUICE_KERNEL_CHECK(kernels::token_logprobs(
        s.raw_logits.as<float>(), s.sampled_tokens.as<int32_t>(),
        reinterpret_cast<const int32_t*>(device + num_top_offset), chosen_lp, top_ids, top_lp,
        num_rows, s.config.vocab_size, s.stream->get()));
    SLUICE_CUDA_CHECK(cudaMemcpyAsync(s.logprob_results_host.data(), results,
                                      rows_n * kLogprobWords * sizeof(uint32_t),
                                      cudaMemcpyDeviceToHost, s.stream->get()));
  }
  s.synchronize();
  std::memcpy(token_ids.data(), s.sampled_tokens_host.data(), token_bytes);
  if (wants_logprobs) {
    const auto* host_results = reinterpret_cast<const uint32_t*>(s.logprob_results_host.data());
    const auto* chosen_lp = reinterpret_cast<const float*>(host_results);
    const auto* top_ids = reinterpret_cast<const int32_t*>(host_results + rows_n);
    const auto* top_lp =
        reinterpret_cast<const float*>(host_results + rows_n * (1 + kernels::kMaxTopLogprobs));
    for (size_t i = 0; i < rows_n; ++i) {
      if (s.num_top[i] < 0 || token_ids[i] < 0) continue;
      TokenLogprobs& out = logprobs[i];
      out.logprob = chosen_lp[i];
      for (int j = 0; j < s.num_top[i]; ++j) {
        const size_t at = i * kernels::kMaxTopLogprobs + static_cast<size_t>(j);
        out.top.emplace_back(top_ids[at], top_lp[at]);
      }
    }
  }
  for (size_t i = 0; i < token_ids.size(); ++i) {
    if (token_ids[i] < 0 && !s.rows_masked_empty[i]) {
      fail("GPU sampler: row ", i,
           " cannot be sampled (a NaN or +inf logit, or every logit is -inf)");
    }
  }
}

}  // namespace sluice
