#include "engine/backend/cuda/cuda_weights.h"

#include <algorithm>
#include <cassert>
#include <set>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "engine/backend/cuda/cuda_types.h"
#include "engine/backend/cuda/cuda_weight_layout.h"
#include "engine/core/dtype.h"
#include "kernels/elementwise.cuh"

namespace sluice {

namespace {

// Weights go up in chunks of at most this many bytes through one device staging buffer, so a
// conversion never needs a second full-size copy of the largest tensor.
constexpr size_t kStagingBytes = size_t{64} << 20;

template <typename From, typename To>
constexpr bool kSameType = std::is_same_v<From, To>;

}  // namespace

// Places tensors one after the other in the weights' allocation and uploads them.
class CudaWeights::Uploader {
 public:
  Uploader(ActivationDType dtype, cudaStream_t stream, unsigned char* base, size_t capacity)
      : dtype_(dtype), stream_(stream), base_(base), capacity_(capacity) {}

  // Uploads one placement of a layer's tensors by its role's kind and records it under the role.
  void layer_tensor(const CudaPlacement& p, float norm_offset, CudaLayerWeights& layer) {
    if (p.role == WeightRole::Router || p.role == WeightRole::ShexpRouter) {
      layer.matrices[p.role] = fp32_matrix(*p.parts[0]);
      return;
    }
    switch (weight_kind(p.role)) {
      case WeightKind::Matrix:
        layer.matrices[p.role] = stacked(p.parts);
        return;
      case WeightKind::Norm:
        assert(p.parts.size() == 1);  // norms are never stacked
        // The offset is folded in once, as the CPU backend does.
        layer.vectors[p.role] = floats(*p.parts[0], norm_offset);
        return;
      case WeightKind::Bias:
        layer.vectors[p.role] = stacked_floats(p.parts);
        return;
      case WeightKind::ExpertMatrices:  // the layer's array holds no stacks (model_weights.h)
      case WeightKind::ExpertBiases:
        fail("weight ", weight_role_name(p.role), ": the CUDA backend holds no expert stacks");
    }
  }

  // Uploads a layer's experts: per expert gate|up stacked and down, and their biases.
  CudaExperts experts(const LayerExperts& e) {
    using enum WeightRole;
    CudaExperts out;
    for (size_t x = 0; x < e[GateExps].size(); ++x) {
      const WeightTensor* gate_up[] = {&e[GateExps][x], &e[UpExps][x]};
      out.gate_up.push_back(stacked(gate_up));
      out.down.push_back(matrix(e[DownExps][x]));
      if (x < e[GateExpsBias].size()) {
        const WeightTensor* biases[] = {&e[GateExpsBias][x], &e[UpExpsBias][x]};
        out.gate_up_bias.push_back(stacked_floats(biases));
        out.down_bias.push_back(floats(e[DownExpsBias][x]));
      }
    }
    return out;
  }

  // Uploads a matrix as one dense fp32 run, widened on the host (the router: small).
  CudaMatrix fp32_matrix(const WeightTensor& t) {
    CudaMatrix m;
    m.rows = static_cast<int>(t.rows());
    m.cols = static_cast<int>(t.cols());
    std::vector<float> host(static_cast<size_t>(t.num_elements()));
    dequantize_row(t.dtype, t.data, host.data(), t.num_elements());
    m.runs.push_back({floats(host), m.rows, static_cast<size_t>(m.cols) * sizeof(float),
                      kernels::QuantFormat::Dense});
    return m;
  }

  // Uploads a matrix: in its blocks when quantized, else in the activation type.
  CudaMatrix matrix(const WeightTensor& t) {
    const WeightTensor* parts[] = {&t};
    return stacked(parts);
  }

  // Uploads matrices of one column count as one, their rows one after the other, as the runs of
  // cuda_weight_layout.h: quantized runs as their blocks, the others in the activation type.
  CudaMatrix stacked(std::span<const WeightTensor* const> parts) {
    const size_t element_bytes = activation_element_bytes(dtype_);
    CudaMatrix m;
    m.cols = static_cast<int>(parts.front()->cols());
    for (const CudaMatrixRunLayout& run : cuda_matrix_runs(parts)) {
      auto* dst = static_cast<unsigned char*>(place(cuda_run_bytes(run, element_bytes)));
      const size_t row_bytes = cuda_run_row_bytes(run, element_bytes);
      size_t offset = 0;
      for (const WeightTensor* t : run.parts) {
        assert(t->cols() == m.cols);  // validated shapes: all [*, hidden]
        if (run.is_quantized) {
          SLUICE_CUDA_CHECK(cudaMemcpyAsync(dst + offset, t->data, t->num_bytes,
                                            cudaMemcpyHostToDevice, stream_));
          notes_.insert(std::string(dtype_name(t->dtype)) + " weights kept in their blocks");
        } else {
          visit_activation_type(
              dtype_, [&](auto tag) { upload_as<typename decltype(tag)::type>(*t, dst + offset); });
        }
        offset += static_cast<size_t>(t->rows()) * row_bytes;
      }
      const auto format =
          run.is_quantized ? static_cast<kernels::QuantFormat>(dtype_traits(run.stored).ggml_type)
                           : kernels::QuantFormat::Dense;
      m.runs.push_back({dst, static_cast<int>(run.rows), row_bytes, format});
      m.rows += static_cast<int>(run.rows);
    }
    return m;
  }

  // Uploads vectors as one fp32 vector, one after the other.
  const float* stacked_floats(std::span<const WeightTensor* const> parts) {
    std::vector<float> host;
    for (const WeightTensor* t : parts) {
      const size_t first = host.size();
      host.resize(first + static_cast<size_t>(t->num_elements()));
      dequantize_row(t->dtype, t->data, host.data() + first, t->num_elements());
    }
    return floats(host);
  }

  // Uploads a vector as fp32 plus offset (widened on the host: norms and biases are small);
  // null for an empty tensor (a role the architecture does not have).
  const float* floats(const WeightTensor& t, float offset = 0.0f) {
    if (t.empty()) return nullptr;
    std::vector<float> host(static_cast<size_t>(t.num_elements()));
    dequantize_row(t.dtype, t.data, host.data(), t.num_elements());
    for (float& x : host) x += offset;
    return floats(host);
  }
  const float* floats(const std::vector<float>& host) {
    auto* dst = static_cast<float*>(place(host.size() * sizeof(float)));
    // On the upload stream (which the constructor waits for): a plain cudaMemcpy would run on the
    // legacy stream, which the non-blocking compute stream does not wait for.
    SLUICE_CUDA_CHECK(cudaMemcpyAsync(dst, host.data(), host.size() * sizeof(float),
                                      cudaMemcpyHostToDevice, stream_));
    return dst;
  }

  std::string summary() const {
    std::string out;
    for (const std::string& note : notes_) out += (out.empty() ? "" : "; ") + note;
    return out;
  }

 private:
  void* place(size_t bytes) {
    assert(used_ + align_256(bytes) <= capacity_);  // sized by cuda_weight_bytes() beforehand
    void* p = base_ + used_;
    used_ += align_256(bytes);
    return p;
  }

  template <typename T>
  void upload_as(const WeightTensor& t, void* dst) {
    const std::string target(activation_dtype_name(dtype_));
    switch (t.dtype) {
      case DType::F32:
        convert_from<float, T>(t, dst);
        notes_.insert(std::is_same_v<T, float> ? "F32 weights as stored"
                                               : "F32 weights converted to " + target);
        return;
      case DType::F16:
        convert_from<__half, T>(t, dst);
        notes_.insert(std::is_same_v<T, __half> ? "F16 weights as stored"
                                                : "F16 weights converted to " + target);
        return;
      case DType::BF16:
        convert_from<__nv_bfloat16, T>(t, dst);
        notes_.insert(std::is_same_v<T, __nv_bfloat16> ? "BF16 weights as stored"
                                                       : "BF16 weights converted to " + target);
        return;
      default:
        fail("weight ", t.name, ": ", dtype_name(t.dtype), " is not supported by the CUDA backend");
    }
  }

  template <typename From, typename To>
  void convert_from(const WeightTensor& t, void* dst) {
    if constexpr (kSameType<From, To>) {
      SLUICE_CUDA_CHECK(cudaMemcpyAsync(dst, t.data, t.num_bytes, cudaMemcpyHostToDevice, stream_));
    } else if constexpr (!kSameType<From, float> && !kSameType<To, float>) {
      // F16 <-> BF16 goes through fp32 (exact for both): the convert kernel pairs every 16-bit
      // type with fp32 only.
      for_each_chunk(t, [&](const uint8_t* src, size_t bytes, int64_t first_element,
                            int64_t num_elements) {
        SLUICE_CUDA_CHECK(cudaMemcpyAsync(staging(), src, bytes, cudaMemcpyHostToDevice, stream_));
        auto* wide = static_cast<float*>(wide_staging());
        SLUICE_KERNEL_CHECK((kernels::convert<From, float>(static_cast<const From*>(staging()),
                                                           wide, num_elements, stream_)));
        SLUICE_KERNEL_CHECK((kernels::convert<float, To>(
            wide, static_cast<To*>(dst) + first_element, num_elements, stream_)));
      });
    } else {
      for_each_chunk(t, [&](const uint8_t* src, size_t bytes, int64_t first_element,
                            int64_t num_elements) {
        SLUICE_CUDA_CHECK(cudaMemcpyAsync(staging(), src, bytes, cudaMemcpyHostToDevice, stream_));
        SLUICE_KERNEL_CHECK((kernels::convert<From, To>(static_cast<const From*>(staging()),
                                                        static_cast<To*>(dst) + first_element,
                                                        num_elements, stream_)));
      });
    }
  }

  // Calls fn(source bytes, byte count, first element, element count) for runs of whole rows
  // (whole quantized blocks) of at most kStagingBytes. Stream order keeps the staging buffer safe:
  // the next copy into it runs after the previous conversion read it.
  template <typename Fn>
  void for_each_chunk(const WeightTensor& t, Fn&& fn) {
    const int64_t rows = t.rows();
    const size_t row_bytes = t.row_bytes();
    const int64_t rows_per_chunk =
        std::max<int64_t>(1, static_cast<int64_t>(kStagingBytes / std::max<size_t>(row_bytes, 1)));
    if (row_bytes > kStagingBytes) fail("weight ", t.name, ": a row of ", row_bytes, " bytes");
    for (int64_t r = 0; r < rows; r += rows_per_chunk) {
      const int64_t n = std::min(rows_per_chunk, rows - r);
      fn(t.row(r), static_cast<size_t>(n) * row_bytes, r * t.cols(), n * t.cols());
    }
  }

  void* staging() {
    if (!staging_.get()) staging_ = DeviceBuffer(kStagingBytes, "weight conversion");
    return staging_.get();
  }
  // A chunk of 16-bit values widened to fp32: twice the staging buffer.
  void* wide_staging() {
    if (!wide_staging_.get()) wide_staging_ = DeviceBuffer(2 * kStagingBytes, "weight conversion");
    return wide_staging_.get();
  }

  ActivationDType dtype_;
  cudaStream_t stream_;
  unsigned char* base_;
  size_t capacity_;
  size_t used_ = 0;
  DeviceBuffer staging_;
  DeviceBuffer wide_staging_;
  std::set<std::string> notes_;
};

CudaWeights::CudaWeights(const ModelWeights& w, const ModelConfig& config, ActivationDType dtype,
                         cudaStream_t stream, int num_host_expert_layers) {
  const size_t total =
      cuda_weight_bytes(w, config, activation_element_bytes(dtype), num_host_expert_layers);
  storage_ = DeviceBuffer(total, "the model's weights");

  Uploader up(dtype, stream, storage_.as<unsigned char>(), total);
  token_embedding_ = up.matrix(w.token_embedding);
  layers_.resize(w.layers.size());
  for (size_t i = 0; i < w.layers.size(); ++i) {
    for (const CudaPlacement& p : cuda_layer_placements(w.layers[i]))
      up.layer_tensor(p, config.norm_weight_offset, layers_[i]);
    if (i < w.experts.size() && static_cast<int>(i) >= num_host_expert_layers)
      layers_[i].experts = up.experts(w.experts[i]);
  }
  const bool is_tied = w.lm_head.data == w.token_embedding.data;
  lm_head_ = is_tied ? token_embedding_ : up.matrix(w.lm_head);
  final_norm_ = up.floats(w.final_norm, config.norm_weight_offset);
  const CudaRopeTables rope = cuda_rope_tables(config, w.rope_freq_factors);
  std::vector<const float*> rope_on_device;
  for (const std::vector<float>& table : rope.tables) rope_on_device.push_back(up.floats(table));
  for (size_t i = 0; i < layers_.size(); ++i)
    layers_[i].rope_inv_freq = rope_on_device[rope.table_of_layer[i]];
  num_rope_tables_ = static_cast<int>(rope.tables.size());
  SLUICE_CUDA_CHECK(cudaStreamSynchronize(stream));
  conversion_summary_ = up.summary() + "; norms and biases fp32";
}

const CudaMatrix& CudaWeights::matrix(WeightRef weight) const {
  const CudaMatrix& m = layer(weight.layer).matrices[weight.role];
  if (m.empty()) {
    fail("the CUDA backend has no matrix ", weight_role_name(weight.role), " in layer ",
         weight.layer);
  }
  return m;
}

const float* CudaWeights::vector(WeightRef weight) const {
  const float* v = layer(weight.layer).vectors[weight.role];
  if (!v) {
    fail("the CUDA backend has no vector ", weight_role_name(weight.role), " in layer ",
         weight.layer);
  }
  return v;
}

}  // namespace sluice
