#include "engine/model/safetensors_reader.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <string_view>

#include "engine/core/error.h"
#include "engine/core/json_parse.h"

namespace sluice {

namespace {

// The header may not exceed 100 MB (the format's own limit), which also bounds the parse.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;
// Weights have at most a handful of dimensions; a longer shape is damage.
constexpr size_t kMaxDims = 8;

struct DTypeInfo {
  const char* name;
  size_t element_bytes;
  std::optional<DType> dtype;
};

constexpr DTypeInfo kDTypes[] = {
    {"F32", 4, DType::F32}, {"F16", 2, DType::F16}, {"BF16", 2, DType::BF16}, {"F64", 8, {}},
    {"I64", 8, {}},         {"I32", 4, {}},         {"I16", 2, {}},           {"I8", 1, {}},
    {"U8", 1, {}},          {"BOOL", 1, {}},        {"F8_E4M3", 1, {}},       {"F8_E5M2", 1, {}},
    {"U16", 2, {}},         {"U32", 4, {}},         {"U64", 8, {}},
};

const DTypeInfo* find_dtype(const std::string& name) {
  for (const auto& info : kDTypes) {
    if (name == info.name) return &info;
  }
  return nullptr;
}

int64_t checked_element_count(const nlohmann::json& shape, const std::string& where) {
  if (!shape.is_array()) fail(where, ": shape is not an array");
  if (shape.size() > kMaxDims)
    fail(where, ": shape has ", shape.size(), " dimensions (at most ", kMaxDims, ")");
  int64_t count = 1;
  for (const auto& dim : shape) {
    if (!dim.is_number_unsigned()) fail(where, ": shape has a negative or non-integer dimension");
    const auto d = dim.get<uint64_t>();
    if (d > (uint64_t{1} << 40)) fail(where, ": dimension ", d, " is out of range");
    if (d != 0 && count > std::numeric_limits<int64_t>::max() / static_cast<int64_t>(d)) {
      fail(where, ": element count overflows");
    }
    count *= static_cast<int64_t>(d);
  }
  return count;
}

TensorEntry parse_entry(const std::string& path, const std::string& name,
                        const nlohmann::json& info, const uint8_t* buffer, uint64_t buffer_size) {
  const std::string where = str_cat(path, ": tensor ", name);
  if (!info.is_object()) fail(where, ": header entry is not an object");
  if (!info.contains("dtype") || !info["dtype"].is_string()) fail(where, ": missing dtype");
  if (!info.contains("shape")) fail(where, ": missing shape");
  if (!info.contains("data_offsets") || !info["data_offsets"].is_array() ||
      info["data_offsets"].size() != 2 || !info["data_offsets"][0].is_number_unsigned() ||
      !info["data_offsets"][1].is_number_unsigned()) {
    fail(where, ": data_offsets must be two non-negative integers");
  }
  const std::string type_name = info["dtype"].get<std::string>();
  const DTypeInfo* type = find_dtype(type_name);
  if (!type) fail(where, ": unknown dtype ", type_name);
  const int64_t count = checked_element_count(info["shape"], where);
  const auto begin = info["data_offsets"][0].get<uint64_t>();
  const auto end = info["data_offsets"][1].get<uint64_t>();
  if (begin > end) fail(where, ": data_offsets [", begin, ", ", end, "] are reversed");
  if (end > buffer_size) {
    fail(where, ": data [", begin, ", ", end, ") runs past the end of the data (", buffer_size,
         " bytes); the file is truncated or corrupt");
  }
  // Compared by division: count * element_bytes may overflow and wrap to the range's size.
  if ((end - begin) % type->element_bytes != 0 ||
      (end - begin) / type->element_bytes != static_cast<uint64_t>(count)) {
    fail(where, ": ", end - begin, " bytes of data do not hold shape ", info["shape"].dump(),
         " of ", type_name);
  }
  TensorEntry entry;
  entry.tensor.name = name;
  entry.tensor.dtype = type->dtype.value_or(DType::F32);
  for (const auto& dim : info["shape"]) entry.tensor.shape.push_back(dim.get<int64_t>());
  entry.tensor.data = buffer + begin;
  entry.tensor.num_bytes = static_cast<size_t>(end - begin);
  entry.dtype_supported = type->dtype.has_value();
  entry.type_name = type_name;
  entry.file = path;
  return entry;
}

}  // namespace

std::shared_ptr<const MappedFile> read_safetensors(const std::string& path,
                                                   TensorDirectory& directory) {
  auto file = MappedFile::open(path);
  if (file->size() < 8)
    fail(path, ": truncated: ", file->size(), " bytes, too short for a safetensors header");
  uint64_t header_bytes = 0;
  std::memcpy(&header_bytes, file->data(), 8);
  if (header_bytes > kMaxHeaderBytes)
    fail(path, ": header length ", header_bytes, " is implausible; not a safetensors file?");
  if (header_bytes > file->size() - 8) {
    fail(path, ": truncated: the header claims ", header_bytes, " bytes but the file has ",
         file->size() - 8, " after the length");
  }
  const auto* header_begin = reinterpret_cast<const char*>(file->data() + 8);
  const std::string_view header_text(header_begin, header_bytes);
  nlohmann::json header;
  if (const auto failure = try_parse_json(header_text, header)) {
    fail(path, ": the header is ", describe_json_failure(header_text, *failure));
  }
  if (!header.is_object()) fail(path, ": the header is not a JSON object");
  const uint8_t* buffer = file->data() + 8 + header_bytes;
  const uint64_t buffer_size = file->size() - 8 - header_bytes;

  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  for (const auto& [name, info] : header.items()) {
    if (name == "__metadata__") continue;
    TensorEntry entry = parse_entry(path, name, info, buffer, buffer_size);
    const auto begin = static_cast<uint64_t>(entry.tensor.data - buffer);
    ranges.emplace_back(begin, begin + entry.tensor.num_bytes);
    directory.add(std::move(entry));
  }
  std::sort(ranges.begin(), ranges.end());
  for (size_t i = 1; i < ranges.size(); ++i) {
    if (ranges[i - 1].second > ranges[i].first)
      fail(path, ": two tensors overlap at byte ", ranges[i].first);
  }
  return file;
}

std::vector<std::shared_ptr<const MappedFile>> read_safetensors_sharded(
    const std::string& index_path, TensorDirectory& directory) {
  const auto index = parse_json_text<nlohmann::json>(read_text_file(index_path), index_path);
  if (!index.is_object() || !index.contains("weight_map") || !index["weight_map"].is_object()) {
    fail(index_path, ": missing the weight_map object");
  }
  const auto dir = std::filesystem::path(index_path).parent_path();
  std::set<std::string> shards;
  for (const auto& [name, shard] : index["weight_map"].items()) {
    if (!shard.is_string()) fail(index_path, ": weight_map entry ", name, " is not a file name");
    const auto shard_name = shard.get<std::string>();
    if (shard_name.find('/') != std::string::npos || shard_name.find("..") != std::string::npos) {
      fail(index_path, ": shard name ", shard_name, " must be a plain file name");
    }
    shards.insert(shard_name);
  }
  std::vector<std::shared_ptr<const MappedFile>> files;
  for (const auto& shard : shards)
    files.push_back(read_safetensors((dir / shard).string(), directory));
  for (const auto& [name, shard] : index["weight_map"].items()) {
    const TensorEntry* entry = directory.find(name);
    const std::string expected = (dir / shard.get<std::string>()).string();
    if (!entry)
      fail(index_path, ": tensor ", name, " is listed in the index but missing from ", expected);
    if (entry->file != expected)
      fail(index_path, ": tensor ", name, " is in ", entry->file, ", not in ", expected,
           " as the index says");
  }
  return files;
}

}  // namespace sluice
