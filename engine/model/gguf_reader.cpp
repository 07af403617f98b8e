#include "engine/model/gguf_reader.h"

#include <algorithm>
#include <fstream>
#include <limits>

#include "engine/core/byte_reader.h"
#include "engine/core/error.h"

namespace sluice {

namespace {

constexpr uint32_t kGgufMagic = 0x46554747;  // "GGUF" little-endian
constexpr uint32_t kDefaultAlignment = 32;
constexpr uint32_t kMaxDims = 4;
// Sane maxima, far above real files (vocabularies and merge lists have well under a million
// entries, models a few thousand tensors) and low enough that what the reader allocates for
// them stays small: an array value costs up to 32 bytes in memory for each 1 to 8 in the file.
constexpr uint64_t kMaxArrayElements = uint64_t{1} << 24;
constexpr uint64_t kMaxTensors = uint64_t{1} << 20;

// The ggml tensor types Sluice has no DType for (the others are rows of the dtype traits
// table): their block size and bytes, so that every tensor's size is still validated, and their
// name, so that a tensor of such a type is refused by name when a model needs it.
struct GgmlTypeTraits {
  uint32_t id;
  const char* name;
  int64_t block_elements;
  size_t block_bytes;
  std::optional<DType> dtype;  // none in the table below
};

constexpr GgmlTypeTraits kUnsupportedGgmlTypes[] = {
    {9, "Q8_1", 32, 36},      {15, "Q8_K", 256, 292},   {16, "IQ2_XXS", 256, 66},
    {17, "IQ2_XS", 256, 74},  {18, "IQ3_XXS", 256, 98}, {19, "IQ1_S", 256, 50},
    {20, "IQ4_NL", 32, 18},   {21, "IQ3_S", 256, 110},  {22, "IQ2_S", 256, 82},
    {23, "IQ4_XS", 256, 136}, {24, "I8", 1, 1},         {25, "I16", 1, 2},
    {26, "I32", 1, 4},        {27, "I64", 1, 8},        {28, "F64", 1, 8},
    {29, "IQ1_M", 256, 56},   {34, "TQ1_0", 256, 54},   {35, "TQ2_0", 256, 66},
};

// The type of a tensor header's type id, from the dtype table or the table above; nullopt for
// an id ggml does not define.
std::optional<GgmlTypeTraits> find_ggml_type(uint32_t id) {
  if (const DTypeTraits* dtype = find_dtype_by_ggml_type(id)) {
    return GgmlTypeTraits{id, dtype->name, dtype->block_elements, dtype->block_bytes, dtype->dtype};
  }
  for (const auto& traits : kUnsupportedGgmlTypes) {
    if (traits.id == id) return traits;
  }
  return std::nullopt;
}

const char* gguf_type_name(GgufType type) {
  switch (type) {
    case GgufType::UInt8:
      return "uint8";
    case GgufType::Int8:
      return "int8";
    case GgufType::UInt16:
      return "uint16";
    case GgufType::Int16:
      return "int16";
    case GgufType::UInt32:
      return "uint32";
    case GgufType::Int32:
      return "int32";
    case GgufType::Float32:
      return "float32";
    case GgufType::Bool:
      return "bool";
    case GgufType::String:
      return "string";
    case GgufType::Array:
      return "array";
    case GgufType::UInt64:
      return "uint64";
    case GgufType::Int64:
      return "int64";
    case GgufType::Float64:
      return "float64";
  }
  return "unknown";
}

std::string read_string(ByteReader& in, std::string_view what) {
  const auto length = in.read<uint64_t>(what);
  if (length > in.remaining()) {
    fail(in.path(), ": string length ", length, " of ", what, " at offset ", in.offset() - 8,
         " runs past the end of the file");
  }
  return in.read_bytes(static_cast<size_t>(length), what);
}

// Reads one scalar of a numeric or bool type as double (exact for all GGUF integer types used
// in practice) and also reports the integer value.
double read_number(ByteReader& in, GgufType type, const std::string& key, int64_t* int_out) {
  int64_t i = 0;
  double f = 0.0;
  switch (type) {
    case GgufType::UInt8:
      i = in.read<uint8_t>(key);
      break;
    case GgufType::Int8:
      i = in.read<int8_t>(key);
      break;
    case GgufType::UInt16:
      i = in.read<uint16_t>(key);
      break;
    case GgufType::Int16:
      i = in.read<int16_t>(key);
      break;
    case GgufType::UInt32:
      i = in.read<uint32_t>(key);
      break;
    case GgufType::Int32:
      i = in.read<int32_t>(key);
      break;
    case GgufType::UInt64: {
      const auto u = in.read<uint64_t>(key);
      if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        fail(in.path(), ": metadata ", key, ": uint64 value ", u, " is out of range");
      }
      i = static_cast<int64_t>(u);
      break;
    }
    case GgufType::Int64:
      i = in.read<int64_t>(key);
      break;
    case GgufType::Bool: {
      const auto b = in.read<uint8_t>(key);
      if (b > 1) fail(in.path(), ": metadata ", key, ": bool value ", int(b), " is not 0 or 1");
      i = b;
      break;
    }
    case GgufType::Float32:
      f = in.read<float>(key);
      break;
    case GgufType::Float64:
      f = in.read<double>(key);
      break;
    default:
      fail(in.path(), ": metadata ", key, ": type ", gguf_type_name(type), " is not a number");
  }
  if (int_out) *int_out = i;
  return (type == GgufType::Float32 || type == GgufType::Float64) ? f : static_cast<double>(i);
}

size_t scalar_size(GgufType type) {
  switch (type) {
    case GgufType::UInt8:
    case GgufType::Int8:
    case GgufType::Bool:
      return 1;
    case GgufType::UInt16:
    case GgufType::Int16:
      return 2;
    case GgufType::UInt32:
    case GgufType::Int32:
    case GgufType::Float32:
      return 4;
    case GgufType::UInt64:
    case GgufType::Int64:
    case GgufType::Float64:
      return 8;
    default:
      return 0;
  }
}

bool is_known_type(uint32_t raw) {
  return raw <= static_cast<uint32_t>(GgufType::Float64);
}

GgufValue read_value(ByteReader& in, GgufType type, const std::string& key) {
  GgufValue value;
  value.type = type;
  switch (type) {
    case GgufType::String:
      value.string_value = read_string(in, key);
      break;
    case GgufType::Array: {
      const auto raw_element = in.read<uint32_t>(key);
      if (!is_known_type(raw_element)) {
        fail(in.path(), ": metadata ", key, ": unknown array element type ", raw_element);
      }
      value.element_type = static_cast<GgufType>(raw_element);
      if (value.element_type == GgufType::Array) {
        fail(in.path(), ": metadata ", key, ": nested arrays are not supported");
      }
      const auto count = in.read<uint64_t>(key);
      // Every element takes at least one byte (strings at least eight), so a count larger than
      // the rest of the file is corrupt; checking first avoids a huge allocation.
      const size_t min_element =
          value.element_type == GgufType::String ? 8 : scalar_size(value.element_type);
      if (count > in.remaining() / min_element) {
        fail(in.path(), ": metadata ", key, ": array of ", count,
             " elements runs past the end of the file");
      }
      if (count > kMaxArrayElements) {
        fail(in.path(), ": metadata ", key, ": array of ", count, " elements is more than the ",
             kMaxArrayElements, " Sluice accepts");
      }
      if (value.element_type == GgufType::String) {
        value.strings.reserve(static_cast<size_t>(count));
        for (uint64_t i = 0; i < count; ++i) value.strings.push_back(read_string(in, key));
      } else {
        value.numbers.reserve(static_cast<size_t>(count));
        for (uint64_t i = 0; i < count; ++i)
          value.numbers.push_back(read_number(in, value.element_type, key, nullptr));
      }
      break;
    }
    default:
      value.float_value = read_number(in, type, key, &value.int_value);
      break;
  }
  return value;
}

}  // namespace

bool GgufValue::is_integer() const {
  switch (type) {
    case GgufType::UInt8:
    case GgufType::Int8:
    case GgufType::UInt16:
    case GgufType::Int16:
    case GgufType::UInt32:
    case GgufType::Int32:
    case GgufType::UInt64:
    case GgufType::Int64:
      return true;
    default:
      return false;
  }
}

std::unique_ptr<GgufFile> GgufFile::open(const std::string& path) {
  std::unique_ptr<GgufFile> gguf(new GgufFile(MappedFile::open(path)));
  gguf->parse();
  return gguf;
}

void GgufFile::parse() {
  ByteReader in(file_->data(), file_->size(), file_->path());
  const auto magic = in.read<uint32_t>("magic");
  if (magic != kGgufMagic) fail(path(), ": not a GGUF file (bad magic)");
  version_ = in.read<uint32_t>("version");
  if (version_ != 2 && version_ != 3)
    fail(path(), ": unsupported GGUF version ", version_, " (Sluice reads 2 and 3)");
  const auto num_tensors = in.read<uint64_t>("tensor count");
  const auto num_metadata = in.read<uint64_t>("metadata count");
  // A key/value pair takes at least 12 bytes, a tensor info at least 24.
  if (num_metadata > in.remaining() / 12)
    fail(path(), ": metadata count ", num_metadata, " is larger than the file allows");
  if (num_tensors > in.remaining() / 24)
    fail(path(), ": tensor count ", num_tensors, " is larger than the file allows");
  if (num_tensors > kMaxTensors)
    fail(path(), ": tensor count ", num_tensors, " is more than the ", kMaxTensors,
         " Sluice accepts");

  for (uint64_t i = 0; i < num_metadata; ++i) {
    std::string key = read_string(in, str_cat("metadata key #", i));
    const auto raw_type = in.read<uint32_t>(key);
    if (!is_known_type(raw_type))
      fail(path(), ": metadata ", key, ": unknown value type ", raw_type);
    GgufValue value = read_value(in, static_cast<GgufType>(raw_type), key);
    if (!metadata_.emplace(key, std::move(value)).second)
      fail(path(), ": metadata key ", key, " appears twice");
  }

  uint64_t alignment = kDefaultAlignment;
  if (const GgufValue* a = find("general.alignment")) {
    if (!a->is_integer() || a->int_value <= 0 || (a->int_value & (a->int_value - 1)) != 0) {
      fail(path(), ": general.alignment must be a positive power of two");
    }
    alignment = static_cast<uint64_t>(a->int_value);
  }

  tensors_.reserve(static_cast<size_t>(num_tensors));
  for (uint64_t i = 0; i < num_tensors; ++i) {
    GgufTensorInfo info;
    info.name = read_string(in, str_cat("tensor name #", i));
    const auto num_dims = in.read<uint32_t>(info.name);
    if (num_dims == 0 || num_dims > kMaxDims)
      fail(path(), ": tensor ", info.name, ": ", num_dims, " dimensions (1 to 4 allowed)");
    std::vector<int64_t> ne(num_dims);
    int64_t num_elements = 1;
    for (auto& n : ne) {
      const auto dim = in.read<uint64_t>(info.name);
      if (dim == 0 || dim > (uint64_t{1} << 40))
        fail(path(), ": tensor ", info.name, ": dimension ", dim, " is out of range");
      n = static_cast<int64_t>(dim);
      if (num_elements > std::numeric_limits<int64_t>::max() / n)
        fail(path(), ": tensor ", info.name, ": element count overflows");
      num_elements *= n;
    }
    info.shape.assign(ne.rbegin(), ne.rend());
    info.ggml_type = in.read<uint32_t>(info.name);
    const std::optional<GgmlTypeTraits> traits = find_ggml_type(info.ggml_type);
    if (!traits) fail(path(), ": tensor ", info.name, ": unknown ggml type ", info.ggml_type);
    if (ne[0] % traits->block_elements != 0) {
      fail(path(), ": tensor ", info.name, ": row length ", ne[0], " is not a multiple of the ",
           traits->name, " block size ", traits->block_elements);
    }
    info.type_name = traits->name;
    info.dtype = traits->dtype;
    // The data must fit in the file, which also keeps the byte count from overflowing.
    const uint64_t num_blocks = static_cast<uint64_t>(num_elements / traits->block_elements);
    if (num_blocks > file_->size() / traits->block_bytes) {
      fail(path(), ": tensor ", info.name, ": ", num_elements, " ", traits->name,
           " elements take more bytes than the whole file (", file_->size(), ")");
    }
    info.num_bytes = static_cast<size_t>(num_blocks * traits->block_bytes);
    info.offset = in.read<uint64_t>(info.name);
    if (info.offset % alignment != 0)
      fail(path(), ": tensor ", info.name, ": offset ", info.offset, " is not aligned to ",
           alignment);
    if (!tensor_index_.emplace(info.name, tensors_.size()).second)
      fail(path(), ": tensor ", info.name, " appears twice");
    tensors_.push_back(std::move(info));
  }

  const uint64_t data_start = (in.offset() + alignment - 1) / alignment * alignment;
  if (num_tensors > 0 && data_start > file_->size())
    fail(path(), ": truncated: the tensor data section starts past the end of the file");
  const uint64_t data_size = file_->size() >= data_start ? file_->size() - data_start : 0;
  for (auto& info : tensors_) {
    if (info.offset > data_size || info.num_bytes > data_size - info.offset) {
      fail(path(), ": tensor ", info.name, ": data [", info.offset, ", ",
           info.offset + info.num_bytes, ") runs past the end of the data section (", data_size,
           " bytes); the file is truncated or corrupt");
    }
    info.data = file_->data() + data_start + info.offset;
  }
  // Tensors must not overlap: sort a view by offset and compare neighbours.
  std::vector<const GgufTensorInfo*> by_offset;
  for (const auto& info : tensors_) by_offset.push_back(&info);
  std::sort(by_offset.begin(), by_offset.end(),
            [](auto* a, auto* b) { return a->offset < b->offset; });
  for (size_t i = 1; i < by_offset.size(); ++i) {
    if (by_offset[i - 1]->offset + by_offset[i - 1]->num_bytes > by_offset[i]->offset) {
      fail(path(), ": tensors ", by_offset[i - 1]->name, " and ", by_offset[i]->name, " overlap");
    }
  }
}

const GgufTensorInfo* GgufFile::find_tensor(const std::string& name) const {
  const auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

const GgufValue* GgufFile::find(const std::string& key) const {
  const auto it = metadata_.find(key);
  return it == metadata_.end() ? nullptr : &it->second;
}

const GgufValue& GgufFile::require(const std::string& key) const {
  const GgufValue* value = find(key);
  if (!value) fail(path(), ": missing metadata key ", key);
  return *value;
}

std::string GgufFile::get_string(const std::string& key) const {
  const GgufValue& v = require(key);
  if (v.type != GgufType::String)
    fail(path(), ": metadata ", key, " is ", gguf_type_name(v.type), ", expected string");
  return v.string_value;
}

int64_t GgufFile::get_int(const std::string& key) const {
  const GgufValue& v = require(key);
  if (!v.is_integer())
    fail(path(), ": metadata ", key, " is ", gguf_type_name(v.type), ", expected an integer");
  return v.int_value;
}

double GgufFile::get_float(const std::string& key) const {
  const GgufValue& v = require(key);
  if (!v.is_float() && !v.is_integer())
    fail(path(), ": metadata ", key, " is ", gguf_type_name(v.type), ", expected a number");
  return v.float_value;
}

bool GgufFile::get_bool(const std::string& key) const {
  const GgufValue& v = require(key);
  if (v.type != GgufType::Bool)
    fail(path(), ": metadata ", key, " is ", gguf_type_name(v.type), ", expected bool");
  return v.int_value != 0;
}

const std::vector<std::string>& GgufFile::get_string_array(const std::string& key) const {
  const GgufValue& v = require(key);
  if (v.type != GgufType::Array || v.element_type != GgufType::String)
    fail(path(), ": metadata ", key, " is not an array of strings");
  return v.strings;
}

const std::vector<double>& GgufFile::get_number_array(const std::string& key) const {
  const GgufValue& v = require(key);
  if (v.type != GgufType::Array || v.element_type == GgufType::String)
    fail(path(), ": metadata ", key, " is not an array of numbers");
  return v.numbers;
}

std::string GgufFile::get_string_or(const std::string& key, const std::string& fallback) const {
  return has(key) ? get_string(key) : fallback;
}
int64_t GgufFile::get_int_or(const std::string& key, int64_t fallback) const {
  return has(key) ? get_int(key) : fallback;
}
double GgufFile::get_float_or(const std::string& key, double fallback) const {
  return has(key) ? get_float(key) : fallback;
}
bool GgufFile::get_bool_or(const std::string& key, bool fallback) const {
  return has(key) ? get_bool(key) : fallback;
}

bool is_gguf_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  uint32_t magic = 0;
  in.read(reinterpret_cast<char*>(&magic), sizeof magic);
  return in.gcount() == sizeof magic && magic == kGgufMagic;
}

}  // namespace sluice
