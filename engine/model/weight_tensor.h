// A weight tensor as it sits in its file: a typed view into a memory map (or into storage the
// model owns). Matrices are [rows = out_features, cols = in_features], row-major, as PyTorch,
// llama2.c and GGUF (ne[0] = cols) all store them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/dtype.h"

namespace sluice {

struct WeightTensor {
  std::string name;  // the name in its file, for errors
  DType dtype = DType::F32;
  std::vector<int64_t> shape;  // outermost first
  const uint8_t* data = nullptr;
  size_t num_bytes = 0;

  bool empty() const { return data == nullptr; }
  int64_t num_elements() const;
  int64_t rows() const { return shape.size() < 2 ? 1 : shape[0]; }
  int64_t cols() const { return shape.empty() ? 0 : shape.back(); }
  size_t row_bytes() const { return dtype_num_bytes(dtype, cols()); }
  const uint8_t* row(int64_t r) const { return data + static_cast<size_t>(r) * row_bytes(); }
};

// Expert e of a stack of experts [num_experts, ...] (a mixture-of-experts tensor), as a view of
// the same bytes named "<stack> (expert e)".
WeightTensor expert_slice(const WeightTensor& stack, int expert);

}  // namespace sluice
