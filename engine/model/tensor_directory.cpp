#include "engine/model/tensor_directory.h"

#include "engine/core/error.h"

namespace sluice {

void TensorDirectory::add(TensorEntry entry) {
  const std::string name = entry.tensor.name;
  const std::string file = entry.file;
  if (!entries_.emplace(name, std::move(entry)).second) {
    fail(file, ": tensor ", name, " appears more than once");
  }
}

size_t TensorDirectory::rename_prefix(const std::string& from, const std::string& to,
                                      const std::vector<std::string>& drop) {
  std::map<std::string, TensorEntry> kept;
  size_t num_dropped = 0;
  for (auto& [name, entry] : entries_) {
    bool dropped = false;
    for (const std::string& prefix : drop) dropped = dropped || name.starts_with(prefix);
    if (dropped) {
      ++num_dropped;
      continue;
    }
    const std::string renamed = name.starts_with(from) ? to + name.substr(from.size()) : name;
    entry.tensor.name = renamed;
    const std::string file = entry.file;
    if (!kept.emplace(renamed, std::move(entry)).second)
      fail(file, ": tensor ", name, " and another are both ", renamed);
  }
  entries_ = std::move(kept);
  return num_dropped;
}

const TensorEntry* TensorDirectory::find(const std::string& name) const {
  const auto it = entries_.find(name);
  return it == entries_.end() ? nullptr : &it->second;
}

WeightTensor TensorDirectory::require(const std::string& name,
                                      const std::vector<int64_t>& shape) const {
  auto tensor = optional(name, shape);
  if (!tensor)
    fail("the model files have no tensor ", name, " (expected shape ", shape_to_string(shape), ")");
  return *tensor;
}

std::optional<WeightTensor> TensorDirectory::optional(const std::string& name,
                                                      const std::vector<int64_t>& shape) const {
  const TensorEntry* entry = find(name);
  if (!entry) return std::nullopt;
  if (!entry->dtype_supported) {
    fail(entry->file, ": tensor ", name, ": type ", entry->type_name,
         " is not supported (supported: ", dtype_names(), ")");
  }
  if (entry->tensor.shape != shape) {
    fail(entry->file, ": tensor ", name, " has shape ", shape_to_string(entry->tensor.shape),
         " but the model configuration implies ", shape_to_string(shape));
  }
  if (!dtype_row_is_valid(entry->tensor.dtype, entry->tensor.cols())) {
    fail(entry->file, ": tensor ", name, ": rows of ", entry->tensor.cols(), " values cannot be ",
         dtype_name(entry->tensor.dtype));
  }
  return entry->tensor;
}

std::string shape_to_string(const std::vector<int64_t>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(shape[i]);
  }
  return out + "]";
}

}  // namespace sluice
