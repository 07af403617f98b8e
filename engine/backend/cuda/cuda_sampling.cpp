#include "engine/backend/cuda/cuda_sampling.h"

#include <algorithm>
#include <cassert>
#include <utility>

#include "engine/core/error.h"

namespace sluice {

namespace {

bool penalises(const SamplingParams& p) {
  return p.repetition_penalty != 1.0f || p.presence_penalty != 0.0f || p.frequency_penalty != 0.0f;
}

void check_ids(std::span<const int32_t> ids, int vocab_size, size_t row) {
  for (const int32_t id : ids) {
    if (id < 0 || id >= vocab_size)
      fail("sampler: row ", row, ": context token id ", id, " is outside the vocabulary");
  }
}

}  // namespace

void pack_sampling_rows(std::span<const CudaSampleRow> rows, int vocab_size,
                        PackedSamplingRows& out) {
  out.rows.clear();
  out.penalty_token_ids.clear();
  out.penalty_output_counts.clear();
  out.masked_rows.clear();
  std::vector<std::pair<int32_t, int32_t>> entries;  // (token id, 1 if from the output)
  for (size_t i = 0; i < rows.size(); ++i) {
    const CudaSampleRow& r = rows[i];
    assert(r.params != nullptr);  // every row names its parameters
    const SamplingParams& p = *r.params;
    kernels::SamplingRow row;
    row.temperature = p.temperature;
    row.top_k = p.top_k;
    row.top_p = p.top_p;
    row.min_p = p.min_p;
    row.repetition_penalty = p.repetition_penalty;
    row.presence_penalty = p.presence_penalty;
    row.frequency_penalty = p.frequency_penalty;
    row.seed = p.seed;
    row.request_key = r.context.request_key;
    row.sample_idx = r.context.sample_idx;
    row.position = static_cast<uint32_t>(r.context.prompt_token_ids.size() +
                                         r.context.output_token_ids.size());
    row.penalty_begin = static_cast<int32_t>(out.penalty_token_ids.size());
    if (penalises(p)) {
      check_ids(r.context.prompt_token_ids, vocab_size, i);
      check_ids(r.context.output_token_ids, vocab_size, i);
      entries.clear();
      for (const int32_t id : r.context.prompt_token_ids) entries.emplace_back(id, 0);
      for (const int32_t id : r.context.output_token_ids) entries.emplace_back(id, 1);
      std::sort(entries.begin(), entries.end());
      for (size_t j = 0; j < entries.size();) {
        const int32_t id = entries[j].first;
        int32_t count = 0;
        for (; j < entries.size() && entries[j].first == id; ++j) count += entries[j].second;
        out.penalty_token_ids.push_back(id);
        out.penalty_output_counts.push_back(count);
      }
    }
    row.penalty_end = static_cast<int32_t>(out.penalty_token_ids.size());
    if (r.is_masked) {
      row.mask_row = static_cast<int32_t>(out.masked_rows.size());
      out.masked_rows.push_back(i);
    }
    out.rows.push_back(row);
  }
}

}  // namespace sluice
