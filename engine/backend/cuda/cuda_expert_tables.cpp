// The device tables of a mixture-of-experts model's experts for the grouped products
// (kernels::quant_gemv_int8_experts) and the buffers those products use (cuda_forward.h).
#include <algorithm>
#include <vector>

#include "engine/backend/cuda/cuda_check.h"
#include "engine/backend/cuda/cuda_forward.h"
#include "engine/backend/cuda/cuda_types.h"
#include "kernels/quant_gemv_int8.cuh"

namespace sluice {

std::vector<CudaExpertTables> build_expert_tables(const CudaWeights& weights,
                                                  int num_host_expert_layers, DeviceBuffer& storage,
                                                  cudaStream_t stream) {
  std::vector<CudaExpertTables> tables(static_cast<size_t>(weights.num_layers()));
  // One run of a format the grouped GEMV has, the same for every expert: its format and row bytes.
  const auto uniform = [](const std::vector<CudaMatrix>& matrices, kernels::QuantFormat& format,
                          size_t& row_bytes) {
    for (const CudaMatrix& m : matrices) {
      if (m.runs.size() != 1 || !kernels::has_int8_gemv(m.runs[0].format)) return false;
      if (&m != &matrices.front() &&
          (m.runs[0].format != format || m.runs[0].row_bytes != row_bytes)) {
        return false;
      }
      format = m.runs[0].format;
      row_bytes = m.runs[0].row_bytes;
    }
    return !matrices.empty();
  };
  // Pointers in layer order: per layer gate|up, down, then the biases where present.
  std::vector<const void*> pointers;
  std::vector<size_t> first(tables.size(), 0);
  for (int l = num_host_expert_layers; l < weights.num_layers(); ++l) {
    const CudaExperts& e = weights.layer(l).experts;
    CudaExpertTables& t = tables[static_cast<size_t>(l)];
    if (e.empty() || !uniform(e.gate_up, t.gate_up_format, t.gate_up_row_bytes) ||
        !uniform(e.down, t.down_format, t.down_row_bytes)) {
      continue;
    }
    first[static_cast<size_t>(l)] = pointers.size() + 1;  // 0: no table
    for (const CudaMatrix& m : e.gate_up) pointers.push_back(m.runs[0].data);
    for (const CudaMatrix& m : e.down) pointers.push_back(m.runs[0].data);
    for (const float* b : e.gate_up_bias) pointers.push_back(b);
    for (const float* b : e.down_bias) pointers.push_back(b);
  }
  if (pointers.empty()) return tables;
  storage = DeviceBuffer(pointers.size() * sizeof(void*), "the experts' pointer tables");
  SLUICE_CUDA_CHECK(cudaMemcpyAsync(storage.get(), pointers.data(), pointers.size() * sizeof(void*),
                                    cudaMemcpyHostToDevice, stream));
  SLUICE_CUDA_CHECK(cudaStreamSynchronize(stream));
  auto* base = static_cast<const void**>(storage.get());
  for (size_t l = 0; l < tables.size(); ++l) {
    if (first[l] == 0) continue;
    const CudaExperts& e = weights.layer(static_cast<int>(l)).experts;
    const size_t n = e.gate_up.size();
    const void* const* p = base + (first[l] - 1);
    CudaExpertTables& t = tables[l];
    t.gate_up = reinterpret_cast<const uint8_t* const*>(p);
    t.down = reinterpret_cast<const uint8_t* const*>(p + n);
    if (!e.gate_up_bias.empty()) {
      t.gate_up_bias = reinterpret_cast<const float* const*>(p + 2 * n);
      t.down_bias = reinterpret_cast<const float* const*>(p + 3 * n);
    }
  }
  return tables;
}

void prepare_grouped_experts(CudaMoeHost& moe, const CudaWeights& weights,
                             const ModelConfig& config, int num_host_expert_layers, bool grouped,
                             cudaStream_t stream) {
  moe.grouped = grouped;
  moe.tables = build_expert_tables(weights, num_host_expert_layers, moe.table_storage, stream);
  if (!moe.table_storage.get()) return;
  const int widest = std::max(config.hidden_size, config.expert_intermediate_size);
  moe.q8 = DeviceBuffer(
      kernels::q8_rows_bytes(kernels::kQuantGemvMaxTokens * config.num_experts, widest),
      "the grouped expert products' rows");
  moe.groups = DeviceBuffer(static_cast<size_t>(config.num_experts) * sizeof(kernels::ExpertRows),
                            "the grouped expert products' groups");
}

}  // namespace sluice
