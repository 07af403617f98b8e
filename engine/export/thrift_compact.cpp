#include "engine/export/thrift_compact.h"

#include <bit>
#include <cassert>

namespace sluice {

uint32_t thrift_zigzag32(int32_t n) {
  // The arithmetic shift spreads the sign bit: negative numbers become odd, the rest even.
  return (static_cast<uint32_t>(n) << 1) ^ static_cast<uint32_t>(n >> 31);
}

uint64_t thrift_zigzag64(int64_t n) {
  return (static_cast<uint64_t>(n) << 1) ^ static_cast<uint64_t>(n >> 63);
}

void ThriftCompactWriter::varint(uint64_t value) {
  while (value >= 0x80) {
    out_.push_back(static_cast<char>((value & 0x7F) | 0x80));
    value >>= 7;
  }
  out_.push_back(static_cast<char>(value));
}

void ThriftCompactWriter::field_header(int16_t id, ThriftType type) {
  // The delta form needs increasing ids; the long form would take any, but Parquet's writers
  // (and this one) write fields in id order, which the tests' hand-computed bytes rely on.
  assert(id > last_field_id_ && "thrift fields are written in increasing id order");
  const int delta = id - last_field_id_;
  if (delta <= 15) {
    out_.push_back(static_cast<char>((delta << 4) | static_cast<int>(type)));
  } else {
    out_.push_back(static_cast<char>(type));
    varint(thrift_zigzag32(id));
  }
  last_field_id_ = id;
}

void ThriftCompactWriter::field_bool(int16_t id, bool value) {
  field_header(id, value ? ThriftType::BoolTrue : ThriftType::BoolFalse);
}

void ThriftCompactWriter::field_i32(int16_t id, int32_t value) {
  field_header(id, ThriftType::I32);
  varint(thrift_zigzag32(value));
}

void ThriftCompactWriter::field_i64(int16_t id, int64_t value) {
  field_header(id, ThriftType::I64);
  varint(thrift_zigzag64(value));
}

void ThriftCompactWriter::field_double(int16_t id, double value) {
  field_header(id, ThriftType::Double);
  // The compact protocol writes a double's IEEE bits little-endian.
  uint64_t bits = std::bit_cast<uint64_t>(value);
  for (int i = 0; i < 8; ++i) {
    out_.push_back(static_cast<char>(bits & 0xFF));
    bits >>= 8;
  }
}

void ThriftCompactWriter::field_binary(int16_t id, std::string_view bytes) {
  field_header(id, ThriftType::Binary);
  list_binary(bytes);
}

void ThriftCompactWriter::field_struct_begin(int16_t id) {
  field_header(id, ThriftType::Struct);
  struct_begin();
}

void ThriftCompactWriter::field_list_begin(int16_t id, ThriftType element_type, size_t size) {
  field_header(id, ThriftType::List);
  if (size < 15) {
    out_.push_back(static_cast<char>((size << 4) | static_cast<size_t>(element_type)));
  } else {
    out_.push_back(static_cast<char>(0xF0 | static_cast<int>(element_type)));
    varint(size);
  }
}

void ThriftCompactWriter::list_i32(int32_t value) {
  varint(thrift_zigzag32(value));
}

void ThriftCompactWriter::list_i64(int64_t value) {
  varint(thrift_zigzag64(value));
}

void ThriftCompactWriter::list_binary(std::string_view bytes) {
  varint(bytes.size());
  out_.append(bytes);
}

void ThriftCompactWriter::struct_begin() {
  enclosing_field_ids_.push_back(last_field_id_);
  last_field_id_ = 0;
}

void ThriftCompactWriter::struct_end() {
  assert(!enclosing_field_ids_.empty() && "struct_end() without an open struct");
  out_.push_back('\0');
  last_field_id_ = enclosing_field_ids_.back();
  enclosing_field_ids_.pop_back();
}

std::string ThriftCompactWriter::take() {
  assert(enclosing_field_ids_.empty() && "every struct is ended before its bytes are taken");
  std::string bytes = std::move(out_);
  out_.clear();
  last_field_id_ = 0;
  return bytes;
}

}  // namespace sluice
