// GGUF (v2 and v3) container reader: the metadata key/value table and the tensor directory,
// every length, count, offset and size checked against the file. Tensors stay in the memory map.
// Format: https://github.com/ggml-org/ggml/blob/master/docs/gguf.md
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/dtype.h"
#include "engine/core/mapped_file.h"

namespace sluice {

enum class GgufType : uint32_t {
  UInt8 = 0,
  Int8 = 1,
  UInt16 = 2,
  Int16 = 3,
  UInt32 = 4,
  Int32 = 5,
  Float32 = 6,
  Bool = 7,
  String = 8,
  Array = 9,
  UInt64 = 10,
  Int64 = 11,
  Float64 = 12,
};

// One metadata value. Scalars are widened (integers to int64/uint64, floats to double); arrays
// keep their element type and hold their values in `strings` or `numbers`.
struct GgufValue {
  GgufType type = GgufType::UInt8;
  GgufType element_type = GgufType::UInt8;  // for arrays
  int64_t int_value = 0;                    // every integer type and bool
  double float_value = 0.0;                 // Float32, Float64
  std::string string_value;
  std::vector<std::string> strings;  // array of String
  std::vector<double> numbers;       // array of any numeric or bool type

  bool is_integer() const;
  bool is_float() const { return type == GgufType::Float32 || type == GgufType::Float64; }
  size_t array_size() const {
    return element_type == GgufType::String ? strings.size() : numbers.size();
  }
};

struct GgufTensorInfo {
  std::string name;
  uint32_t ggml_type = 0;      // the raw type id in the file
  std::string type_name;       // ggml's name of that type: "Q4_K", "IQ2_XXS"
  std::optional<DType> dtype;  // set when Sluice can compute with this type
  std::vector<int64_t> shape;  // outermost first (ne reversed): [rows, cols] for matrices
  uint64_t offset = 0;         // from the start of the data section
  size_t num_bytes = 0;
  const uint8_t* data = nullptr;  // into the map
};

class GgufFile {
 public:
  // Maps and parses the file. Throws Error naming the file and the key or tensor at fault.
  static std::unique_ptr<GgufFile> open(const std::string& path);

  const std::string& path() const { return file_->path(); }
  uint32_t version() const { return version_; }
  const std::shared_ptr<const MappedFile>& file() const { return file_; }
  const std::vector<GgufTensorInfo>& tensors() const { return tensors_; }
  const std::map<std::string, GgufValue>& metadata() const { return metadata_; }

  // Returns the tensor or nullptr.
  const GgufTensorInfo* find_tensor(const std::string& name) const;
  // Returns the value or nullptr.
  const GgufValue* find(const std::string& key) const;
  bool has(const std::string& key) const { return find(key) != nullptr; }

  // Typed getters: throw Error naming the key when it is missing or of the wrong type.
  std::string get_string(const std::string& key) const;
  int64_t get_int(const std::string& key) const;
  double get_float(const std::string& key) const;  // accepts integers too
  bool get_bool(const std::string& key) const;
  const std::vector<std::string>& get_string_array(const std::string& key) const;
  const std::vector<double>& get_number_array(const std::string& key) const;

  // Getters with a default for optional keys (still throw on a wrong type).
  std::string get_string_or(const std::string& key, const std::string& fallback) const;
  int64_t get_int_or(const std::string& key, int64_t fallback) const;
  double get_float_or(const std::string& key, double fallback) const;
  bool get_bool_or(const std::string& key, bool fallback) const;

 private:
  explicit GgufFile(std::shared_ptr<const MappedFile> file) : file_(std::move(file)) {}
  void parse();
  const GgufValue& require(const std::string& key) const;

  std::shared_ptr<const MappedFile> file_;
  uint32_t version_ = 0;
  std::map<std::string, GgufValue> metadata_;
  std::vector<GgufTensorInfo> tensors_;
  std::map<std::string, size_t> tensor_index_;
};

// Returns true when the file at path starts with the GGUF magic.
bool is_gguf_file(const std::string& path);

}  // namespace sluice
