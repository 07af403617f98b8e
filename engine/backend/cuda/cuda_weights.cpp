#include "engine/backend/cuda/cuda_weights.h"

#include <algorithm>
#include <cassert>
#include <set>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "engine/backend/cuda/cuda_types.h"
#include "engine/backend/rope.h"
#include "engine/core/dtype.h"
#include "kernels/dequantize.cuh"
#include "kernels/elementwise.cuh"

namespace sluice {

namespace {

// Weights go up in chunks of at most this many bytes through one device staging buffer, so a
// conversion never needs a second full-size copy of the largest tensor.
constexpr size_t kStagingBytes = size_t{64} << 20;

// A tensor of a layer as the device holds it: one role's tensor, or parts stacked into one and
// kept under `role`.
struct DevicePlacement {
  WeightRole role;
  std::vector<const WeightTensor*> parts;
};

// The biases of the stacked q|k|v product, stacked the same way (under Bq).
constexpr WeightRole kQkvBiases[] = {WeightRole::Bq, WeightRole::Bk, WeightRole::Bv};

// The layer's tensors on the device, in placement order: the fused roles' parts (q|k|v under
// Wqkv, gate|up under GateUp) and the q|k|v biases (under Bq) stacked, every other role the layer
// has alone.
std::vector<DevicePlacement> device_placements(const LayerWeights& l) {
  std::vector<DevicePlacement> out;
  LayerRoleArray<bool> is_stacked;
  const std::pair<WeightRole, std::span<const WeightRole>> stacks[] = {
      {WeightRole::Wqkv, fused_parts(WeightRole::Wqkv)},
      {WeightRole::GateUp, fused_parts(WeightRole::GateUp)},
      {WeightRole::Bq, kQkvBiases}};
  for (const auto& [role, parts] : stacks) {
    DevicePlacement stack{role, {}};
    for (const WeightRole part : parts) {
      is_stacked[part] = true;
      if (!l[part].empty()) stack.parts.push_back(&l[part]);
    }
    if (stack.parts.empty()) continue;
    if (stack.parts.size() != parts.size())
      fail("weight ", stack.parts[0]->name, ": only some of the parts stacked with it are present");
    out.push_back(std::move(stack));
  }
  for (const WeightRole role : all_weight_roles()) {
    if (is_layer_role(role) && !is_stacked[role] && !l[role].empty())
      out.push_back({role, {&l[role]}});
  }
  return out;
}

// The bytes a placement takes in the weights' allocation: matrices in the activation type,
// vectors in fp32.
size_t placed_bytes(const DevicePlacement& p, size_t element_bytes) {
  size_t elements = 0;
  for (const WeightTensor* t : p.parts) elements += static_cast<size_t>(t->num_elements());
  const bool is_matrix = weight_kind(p.role) == WeightKind::Matrix;
  return align_256(elements * (is_matrix ? element_bytes : sizeof(float)));
}

template <typename From, typename To>
constexpr bool kSameType = std::is_same_v<From, To>;

// The model's distinct RoPE frequency tables in fp32 (as the kernel reads them), and which one
// each layer uses: one table unless layers differ in base or scaling (Gemma 3's local layers).
struct RopeTables {
  std::vector<std::vector<float>> tables;
  std::vector<size_t> table_of_layer;  // [num_layers]
};

RopeTables rope_tables(const ModelConfig& config, const WeightTensor& freq_factors) {
  RopeTables out;
  for (int l = 0; l < config.num_layers; ++l) {
    const std::vector<double> wide = rope_inverse_frequencies(config, l, freq_factors);
    const std::vector<float> table(wide.begin(), wide.end());
    const auto it = std::find(out.tables.begin(), out.tables.end(), table);
    out.table_of_layer.push_back(static_cast<size_t>(it - out.tables.begin()));
    if (it == out.tables.end()) out.tables.push_back(table);
  }
  return out;
}

}  // namespace

// Places tensors one after the other in the weights' allocation and uploads them.
class CudaWeights::Uploader {
 public:
  Uploader(ActivationDType dtype, cudaStream_t stream, unsigned char* base, size_t capacity)
      : dtype_(dtype), stream_(stream), base_(base), capacity_(capacity) {}

  // Uploads one placement of a layer's tensors by its role's kind and records it under the role.
  void layer_tensor(const DevicePlacement& p, float norm_offset, CudaLayerWeights& layer) {
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
    }
  }

  // Uploads a matrix in the activation type.
  CudaMatrix matrix(const WeightTensor& t) {
    const WeightTensor* parts[] = {&t};
    return stacked(parts);
  }

  // Uploads matrices of one column count as one, their rows one after the other.
  CudaMatrix stacked(std::span<const WeightTensor* const> parts) {
    const size_t element_bytes = activation_element_bytes(dtype_);
    size_t elements = 0;
    int64_t rows = 0;
    for (const WeightTensor* t : parts) {
      elements += static_cast<size_t>(t->num_elements());
      rows += t->rows();
    }
    auto* dst = static_cast<unsigned char*>(place(elements * element_bytes));
    size_t offset = 0;
    for (const WeightTensor* t : parts) {
      assert(t->cols() == parts.front()->cols());  // validated shapes: all [*, hidden]
      visit_activation_type(dtype_, [&](auto tag) {
        upload_as<typename decltype(tag)::type>(*t, dst + offset * element_bytes);
      });
      offset += static_cast<size_t>(t->num_elements());
    }
    return CudaMatrix{dst, static_cast<int>(rows), static_cast<int>(parts.front()->cols())};
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
    assert(used_ + align_256(bytes) <= capacity_);  // sized by weights_bytes() beforehand
    void* p = base_ + used_;
    used_ += align_256(bytes);
    return p;
  }

  template <typename T>
  void upload_as(const WeightTensor& t, void* dst) {
    const std::string target(activation_dtype_name(dtype_));
    const DTypeTraits& traits = dtype_traits(t.dtype);
    if (traits.quantized) {
      dequantize_from<T>(t, dst);
      notes_.insert(std::string(traits.name) + " weights dequantized to " + target + " at load");
      return;
    }
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

  // Uploads the stored blocks and widens them on the device. The kernels number their formats
  // by the GGUF type id, which the dtype table holds.
  template <typename T>
  void dequantize_from(const WeightTensor& t, void* dst) {
    const auto format = static_cast<kernels::QuantFormat>(dtype_traits(t.dtype).ggml_type);
    for_each_chunk(t, [&](const uint8_t* src, size_t bytes, int64_t first_element,
                          int64_t num_elements) {
      SLUICE_CUDA_CHECK(cudaMemcpyAsync(staging(), src, bytes, cudaMemcpyHostToDevice, stream_));
      SLUICE_KERNEL_CHECK(kernels::dequantize<T>(format, static_cast<const uint8_t*>(staging()),
                                                 static_cast<T*>(dst) + first_element, num_elements,
                                                 stream_));
    });
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
                         cudaStream_t stream) {
  const size_t element_bytes = activation_element_bytes(dtype);
  std::vector<std::vector<DevicePlacement>> placements;
  const auto floats_bytes = [](int64_t n) { return align_256(static_cast<size_t>(n) * 4); };
  const auto matrix_bytes = [&](const WeightTensor& t) {
    return align_256(static_cast<size_t>(t.num_elements()) * element_bytes);
  };
  const bool is_tied = w.lm_head.data == w.token_embedding.data;
  size_t total = matrix_bytes(w.token_embedding) + (is_tied ? 0 : matrix_bytes(w.lm_head));
  for (const LayerWeights& l : w.layers) {
    placements.push_back(device_placements(l));
    for (const DevicePlacement& p : placements.back()) total += placed_bytes(p, element_bytes);
  }
  const RopeTables rope = rope_tables(config, w.rope_freq_factors);
  total +=
      floats_bytes(config.hidden_size) + rope.tables.size() * floats_bytes(config.rope_dims() / 2);
  storage_ = DeviceBuffer(total, "the model's weights");

  Uploader up(dtype, stream, storage_.as<unsigned char>(), total);
  token_embedding_ = up.matrix(w.token_embedding).data;
  layers_.resize(w.layers.size());
  for (size_t i = 0; i < w.layers.size(); ++i) {
    for (const DevicePlacement& p : placements[i])
      up.layer_tensor(p, config.norm_weight_offset, layers_[i]);
  }
  lm_head_ = is_tied ? token_embedding_ : up.matrix(w.lm_head).data;
  final_norm_ = up.floats(w.final_norm, config.norm_weight_offset);
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
  if (!m.data) {
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
