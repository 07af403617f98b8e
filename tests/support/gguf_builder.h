// Writes small GGUF v3 files for tests: metadata of any type, tensors with chosen offsets, and
// deliberate corruption (bad magic, offsets past the end, truncation).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sluice::test {

class GgufBuilder {
 public:
  GgufBuilder& add_string(const std::string& key, const std::string& value);
  GgufBuilder& add_u32(const std::string& key, uint32_t value);
  GgufBuilder& add_f32(const std::string& key, float value);
  GgufBuilder& add_bool(const std::string& key, bool value);
  GgufBuilder& add_string_array(const std::string& key, const std::vector<std::string>& values);
  GgufBuilder& add_f32_array(const std::string& key, const std::vector<float>& values);
  GgufBuilder& add_i32_array(const std::string& key, const std::vector<int32_t>& values);
  // An F32 tensor; shape outermost first. offset_override (>= 0) replaces the computed offset.
  GgufBuilder& add_f32_tensor(const std::string& name, const std::vector<int64_t>& shape,
                              const std::vector<float>& values, int64_t offset_override = -1);

  // Serialises the file; magic replaces "GGUF" when given.
  std::string build(const std::string& magic = "GGUF") const;

 private:
  struct Tensor {
    std::string name;
    std::vector<int64_t> shape;
    std::vector<float> values;
    int64_t offset_override;
  };
  std::string metadata_;
  uint64_t num_metadata_ = 0;
  std::vector<Tensor> tensors_;
};

}  // namespace sluice::test
