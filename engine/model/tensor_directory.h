// The tensors a model's files contain, by name, before the loader assigns them roles. Readers
// (safetensors, GGUF, llama2.c) fill it; the loader takes tensors out with require(), which
// checks presence, element type and shape and names the file and tensor when they are wrong.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/model/weight_tensor.h"

namespace sluice {

struct TensorEntry {
  WeightTensor tensor;          // dtype is meaningful only when dtype_supported
  bool dtype_supported = true;  // false for types Sluice cannot compute with (I64, IQ2_XXS, ...)
  std::string type_name;        // the type as the file names it
  std::string file;             // the file holding it
};

class TensorDirectory {
 public:
  // Adds an entry; throws Error when the name is already present.
  void add(TensorEntry entry);

  bool contains(const std::string& name) const { return entries_.count(name) != 0; }
  const TensorEntry* find(const std::string& name) const;
  size_t size() const { return entries_.size(); }
  const std::map<std::string, TensorEntry>& entries() const { return entries_; }

  // Returns the tensor, checking that it exists, has a supported type and exactly `shape`
  // (outermost first). Throws Error naming the tensor, its file and the disagreement.
  WeightTensor require(const std::string& name, const std::vector<int64_t>& shape) const;

  // Renames every tensor named "<from><rest>" to "<to><rest>" and drops those starting with one
  // of `drop` (a multimodal checkpoint's language model under its own prefix, and the vision
  // tower or multi-token-prediction head Sluice does not run). Returns how many were dropped.
  // Throws Error when a renamed tensor's name is taken already.
  size_t rename_prefix(const std::string& from, const std::string& to,
                       const std::vector<std::string>& drop);

  // Like require() but returns nullopt when the tensor is absent.
  std::optional<WeightTensor> optional(const std::string& name,
                                       const std::vector<int64_t>& shape) const;

 private:
  std::map<std::string, TensorEntry> entries_;
};

// "[64, 172]"
std::string shape_to_string(const std::vector<int64_t>& shape);

}  // namespace sluice
