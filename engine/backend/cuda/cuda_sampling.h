// The host half of sampling on the device: each row's SamplingParams and context become a
// kernels::SamplingRow plus its penalty entries (the distinct tokens of prompt and output with
// their output counts), packed for one transfer. The Philox position is the prompt length plus
// the output length, as the host Sampler uses it, so both draw the same uniform.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/backend/cuda/cuda_backend.h"
#include "kernels/sampling.cuh"

namespace sluice {

struct PackedSamplingRows {
  std::vector<kernels::SamplingRow> rows;      // [num_rows]
  std::vector<int32_t> penalty_token_ids;      // [num_penalty_entries]
  std::vector<int32_t> penalty_output_counts;  // [num_penalty_entries]
  std::vector<size_t> masked_rows;             // [num_masks] the row of each token mask
};

// Fills `out` for the rows. Penalty entries are built only for rows whose parameters penalise;
// masked rows get the next token mask in order (SamplingRow::mask_row).
// Throws Error naming the row when a context token id lies outside [0, vocab_size), as the host
// Sampler does.
void pack_sampling_rows(std::span<const CudaSampleRow> rows, int vocab_size,
                        PackedSamplingRows& out);

}  // namespace sluice
