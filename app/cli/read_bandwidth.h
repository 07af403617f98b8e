// The memory floor of a machine, measured: how fast `num_threads` threads read host memory (the
// CPU backend's weights stream from there), or a GPU's copy bandwidth (cuda_roofline.h). `sluice
// bench --batched` states it so every machine's decode steps read as a share of their own floor:
// weight bytes per step / bandwidth is the shortest a memory-bound step can be.
#pragma once

#include <cstddef>
#include <string>

#include "engine/model/model.h"

namespace sluice::cli {

struct ReadBandwidth {
  double bytes_per_s = 0.0;
  std::string how;  // "host read, 2 threads, 512 MiB, best of 5 passes"
};

// Reads a buffer far larger than any cache (512 MiB, touched first) with num_threads threads
// (<= 0: one per hardware thread), each summing its own slice, and returns the best of 5 passes.
ReadBandwidth measure_host_read_bandwidth(int num_threads);

// The bytes of weights a decode step reads on the device: every layer matrix and the LM head as
// the backend holds them (the embedding table is read a row per token, so it is left out). On the
// CPU every type lies as the file stores it; on a GPU quantized types stay in their blocks and the
// float ones take gpu_element_bytes each (0: on the CPU). Of a mixture of experts' stacks it
// counts num_experts_used experts per layer: what one token reads, the floor of any step.
double streamed_weight_bytes(const Model& model, size_t gpu_element_bytes);

}  // namespace sluice::cli
