// Writes .safetensors files for tests (to build sharded or modified checkpoints from real ones).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sluice::test {

struct SafetensorsTensor {
  std::string name;
  std::string dtype;             // "F32", "BF16", ...
  std::vector<int64_t> shape;
  std::string bytes;             // raw little-endian data
};

// Writes the tensors in order with an 8-byte-aligned header.
void write_safetensors(const std::string& path, const std::vector<SafetensorsTensor>& tensors);

}  // namespace sluice::test
