#include "engine/model/openai_mxfp4_experts.h"

#include <cstring>
#include <tuple>

#include "engine/core/dtype.h"
#include "engine/core/error.h"
#include "engine/core/quant_blocks.h"

namespace sluice {

namespace {

constexpr int64_t kBlockValues = 32;
constexpr int64_t kBlockPayload = 16;

// The raw bytes of a tensor of the files, checked for its type name and shape.
const TensorEntry& raw_tensor(const TensorDirectory& tensors, const std::string& name,
                              const char* type_name, const std::vector<int64_t>& shape,
                              std::set<std::string>& used) {
  const TensorEntry* entry = tensors.find(name);
  if (!entry) fail("the model files have no tensor ", name, " (gpt-oss's MXFP4 experts)");
  if (entry->type_name != type_name || entry->tensor.shape != shape) {
    fail(entry->file, ": tensor ", name, " is ", entry->type_name, " ",
         shape_to_string(entry->tensor.shape), " but the configuration implies ", type_name, " ",
         shape_to_string(shape));
  }
  used.insert(name);
  return *entry;
}

// One stack of experts [experts, rows, cols] as GGUF MXFP4 blocks, taking every `row_step`-th
// row of the file's [experts, file_rows, cols / 32] blocks from `first_row`.
struct Mxfp4Source {
  const uint8_t* blocks;  // [experts, file_rows, cols / 32, 16]
  const uint8_t* scales;  // [experts, file_rows, cols / 32]
  int64_t file_rows, cols;
};

std::vector<uint8_t> repack(const Mxfp4Source& src, int64_t experts, int64_t first_row,
                            int64_t row_step) {
  const int64_t rows = (src.file_rows - first_row + row_step - 1) / row_step;
  const int64_t blocks_per_row = src.cols / kBlockValues;
  std::vector<uint8_t> out(static_cast<size_t>(experts * rows * blocks_per_row) *
                           sizeof(quant::BlockMXFP4));
  auto* dst = reinterpret_cast<quant::BlockMXFP4*>(out.data());
  for (int64_t e = 0; e < experts; ++e) {
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t file_row = e * src.file_rows + first_row + r * row_step;
      for (int64_t b = 0; b < blocks_per_row; ++b, ++dst) {
        const int64_t block = file_row * blocks_per_row + b;
        const uint8_t* in = src.blocks + block * kBlockPayload;
        dst->e = src.scales[block];
        for (int j = 0; j < kBlockPayload; ++j) {
          // Value v of the block is nibble v % 2 of byte v / 2 in openai's order.
          auto value = [&](int v) { return (in[v / 2] >> (4 * (v % 2))) & 0xF; };
          dst->qs[j] = static_cast<uint8_t>(value(j) | value(j + 16) << 4);
        }
      }
    }
  }
  return out;
}

// Bias rows [experts, file_cols] (BF16) widened to F32, every `step`-th value from `first`.
std::vector<uint8_t> widen_biases(const uint8_t* data, int64_t experts, int64_t file_cols,
                                  int64_t first, int64_t step) {
  const int64_t cols = (file_cols - first + step - 1) / step;
  std::vector<uint8_t> out(static_cast<size_t>(experts * cols) * sizeof(float));
  for (int64_t e = 0; e < experts; ++e) {
    for (int64_t c = 0; c < cols; ++c) {
      uint16_t h;
      std::memcpy(&h, data + 2 * (e * file_cols + first + c * step), sizeof h);
      const float f = bf16_to_f32(h);
      std::memcpy(out.data() + sizeof(float) * static_cast<size_t>(e * cols + c), &f, sizeof f);
    }
  }
  return out;
}

// Per-expert views of a stack held in `storage`: [experts, rows, cols] of dtype (cols = 0: a
// stack of vectors of `rows`).
std::vector<WeightTensor> slices(const std::string& name, DType dtype,
                                 const std::vector<uint8_t>& storage, int64_t experts, int64_t rows,
                                 int64_t cols) {
  WeightTensor stack;
  stack.name = name;
  stack.dtype = dtype;
  stack.shape =
      cols > 0 ? std::vector<int64_t>{experts, rows, cols} : std::vector<int64_t>{experts, rows};
  stack.data = storage.data();
  stack.num_bytes = storage.size();
  std::vector<WeightTensor> out;
  for (int64_t e = 0; e < experts; ++e) out.push_back(expert_slice(stack, static_cast<int>(e)));
  return out;
}

}  // namespace

void read_openai_mxfp4_experts(const TensorDirectory& tensors, const ModelConfig& c, int layer,
                               LayerExperts& experts, std::set<std::string>& used,
                               std::vector<std::vector<uint8_t>>& owned) {
  using enum WeightRole;
  const int64_t e = c.num_experts, h = c.hidden_size, f = c.expert_intermediate_size;
  if (h % kBlockValues != 0 || f % kBlockValues != 0)
    fail("gpt-oss MXFP4 experts need hidden and FFN sizes in whole blocks of 32 (", h, ", ", f,
         ")");
  const std::string prefix = str_cat("model.layers.", layer, ".mlp.experts.");
  auto stack = [&](const std::string& name, int64_t rows, int64_t cols) {
    const TensorEntry& blocks = raw_tensor(tensors, prefix + name + "_blocks", "U8",
                                           {e, rows, cols / kBlockValues, kBlockPayload}, used);
    const TensorEntry& scales =
        raw_tensor(tensors, prefix + name + "_scales", "U8", {e, rows, cols / kBlockValues}, used);
    const TensorEntry& bias = raw_tensor(tensors, prefix + name + "_bias", "BF16", {e, rows}, used);
    return std::tuple{Mxfp4Source{blocks.tensor.data, scales.tensor.data, rows, cols},
                      bias.tensor.data};
  };
  auto keep = [&](std::vector<uint8_t> data) -> const std::vector<uint8_t>& {
    owned.push_back(std::move(data));
    return owned.back();
  };
  const auto [gate_up, gate_up_bias] = stack("gate_up_proj", 2 * f, h);
  const auto [down, down_bias] = stack("down_proj", h, f);
  const std::string gate_up_name = prefix + "gate_up_proj";
  const std::string down_name = prefix + "down_proj";
  experts[GateExps] =
      slices(gate_up_name + " (gate)", DType::MXFP4, keep(repack(gate_up, e, 0, 2)), e, f, h);
  experts[UpExps] =
      slices(gate_up_name + " (up)", DType::MXFP4, keep(repack(gate_up, e, 1, 2)), e, f, h);
  experts[DownExps] = slices(down_name, DType::MXFP4, keep(repack(down, e, 0, 1)), e, h, f);
  experts[GateExpsBias] = slices(gate_up_name + "_bias (gate)", DType::F32,
                                 keep(widen_biases(gate_up_bias, e, 2 * f, 0, 2)), e, f, 0);
  experts[UpExpsBias] = slices(gate_up_name + "_bias (up)", DType::F32,
                               keep(widen_biases(gate_up_bias, e, 2 * f, 1, 2)), e, f, 0);
  experts[DownExpsBias] =
      slices(down_name + "_bias", DType::F32, keep(widen_biases(down_bias, e, h, 0, 1)), e, h, 0);
}

}  // namespace sluice
