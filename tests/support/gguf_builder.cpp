#include "tests/support/gguf_builder.h"

#include <cstring>

namespace sluice::test {

namespace {

template <typename T>
void put(std::string& out, T value) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  out.append(bytes, sizeof(T));
}

void put_string(std::string& out, const std::string& s) {
  put<uint64_t>(out, s.size());
  out += s;
}

}  // namespace

GgufBuilder& GgufBuilder::add_string(const std::string& key, const std::string& value) {
  put_string(metadata_, key);
  put<uint32_t>(metadata_, 8);
  put_string(metadata_, value);
  ++num_metadata_;
  return *this;
}

GgufBuilder& GgufBuilder::add_u32(const std::string& key, uint32_t value) {
  put_string(metadata_, key);
  put<uint32_t>(metadata_, 4);
  put<uint32_t>(metadata_, value);
  ++num_metadata_;
  return *this;
}

GgufBuilder& GgufBuilder::add_f32(const std::string& key, float value) {
  put_string(metadata_, key);
  put<uint32_t>(metadata_, 6);
  put<float>(metadata_, value);
  ++num_metadata_;
  return *this;
}

GgufBuilder& GgufBuilder::add_bool(const std::string& key, bool value) {
  put_string(metadata_, key);
  put<uint32_t>(metadata_, 7);
  put<uint8_t>(metadata_, value ? 1 : 0);
  ++num_metadata_;
  return *this;
}

GgufBuilder& GgufBuilder::add_string_array(const std::string& key,
                                           const std::vector<std::string>& values) {
  put_string(metadata_, key);
  put<uint32_t>(metadata_, 9);
  put<uint32_t>(metadata_, 8);
  put<uint64_t>(metadata_, values.size());
  for (const auto& v : values) put_string(metadata_, v);
  ++num_metadata_;
  return *this;
}

GgufBuilder& GgufBuilder::add_f32_array(const std::string& key, const std::vector<float>& values) {
  put_string(metadata_, key);
  put<uint32_t>(metadata_, 9);
  put<uint32_t>(metadata_, 6);
  put<uint64_t>(metadata_, values.size());
  for (const float v : values) put<float>(metadata_, v);
  ++num_metadata_;
  return *this;
}

GgufBuilder& GgufBuilder::add_i32_array(const std::string& key,
                                        const std::vector<int32_t>& values) {
  put_string(metadata_, key);
  put<uint32_t>(metadata_, 9);
  put<uint32_t>(metadata_, 5);
  put<uint64_t>(metadata_, values.size());
  for (const int32_t v : values) put<int32_t>(metadata_, v);
  ++num_metadata_;
  return *this;
}

GgufBuilder& GgufBuilder::add_f32_tensor(const std::string& name, const std::vector<int64_t>& shape,
                                         const std::vector<float>& values,
                                         int64_t offset_override) {
  tensors_.push_back({name, shape, values, offset_override});
  return *this;
}

std::string GgufBuilder::build(const std::string& magic) const {
  std::string out = magic.substr(0, 4);
  put<uint32_t>(out, 3);
  put<uint64_t>(out, tensors_.size());
  put<uint64_t>(out, num_metadata_);
  out += metadata_;
  uint64_t offset = 0;
  std::vector<uint64_t> offsets;
  for (const auto& t : tensors_) {
    put_string(out, t.name);
    put<uint32_t>(out, static_cast<uint32_t>(t.shape.size()));
    for (auto it = t.shape.rbegin(); it != t.shape.rend(); ++it)
      put<uint64_t>(out, static_cast<uint64_t>(*it));
    put<uint32_t>(out, 0);  // F32
    const uint64_t this_offset =
        t.offset_override >= 0 ? static_cast<uint64_t>(t.offset_override) : offset;
    put<uint64_t>(out, this_offset);
    offsets.push_back(this_offset);
    offset += (t.values.size() * 4 + 31) / 32 * 32;
  }
  while (out.size() % 32 != 0) out.push_back('\0');
  const size_t data_start = out.size();
  for (size_t i = 0; i < tensors_.size(); ++i) {
    if (tensors_[i].offset_override >= 0) continue;  // deliberately points elsewhere
    out.resize(std::max(out.size(), data_start + offsets[i]), '\0');
    for (const float v : tensors_[i].values) put<float>(out, v);
    while ((out.size() - data_start) % 32 != 0) out.push_back('\0');
  }
  return out;
}

}  // namespace sluice::test
