// The Thrift compact protocol, the encoding of Parquet's page headers and footer (parquet.thrift
// in the apache/parquet-format repository). Only the writing half, and only the types Parquet's
// structs use: bool, i32, i64, double, binary (strings), lists and nested structs. The writer
// appends to a byte string: a struct's fields go in as field calls in increasing id order (the
// compact protocol stores a field id as the delta from the previous one), ended by struct_end().
//
//   field header  (delta << 4) | type when 0 < delta <= 15, else type then the id as a zigzag
//                 varint; a bool field's value is its type (1 true, 2 false)
//   i32, i64      zigzag, then ULEB-128 varint
//   binary        varint length, then the bytes
//   list          (size << 4) | element type when size < 15, else 0xF0 | type then varint size
//   struct end    0x00 (a nested struct restores the enclosing struct's last field id)
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sluice {

// The compact protocol's type codes (as they appear in field and list headers).
enum class ThriftType : uint8_t {
  BoolTrue = 1,
  BoolFalse = 2,
  Byte = 3,
  I16 = 4,
  I32 = 5,
  I64 = 6,
  Double = 7,
  Binary = 8,
  List = 9,
  Set = 10,
  Map = 11,
  Struct = 12,
};

// Returns n zigzag-encoded: 0 → 0, -1 → 1, 1 → 2, -2 → 3, ...
uint32_t thrift_zigzag32(int32_t n);
uint64_t thrift_zigzag64(int64_t n);

class ThriftCompactWriter {
 public:
  // Fields of the current struct; ids must increase within a struct (asserted).
  void field_bool(int16_t id, bool value);
  void field_i32(int16_t id, int32_t value);
  void field_i64(int16_t id, int64_t value);
  void field_double(int16_t id, double value);
  void field_binary(int16_t id, std::string_view bytes);
  // Opens a struct-valued field; its fields follow, then struct_end().
  void field_struct_begin(int16_t id);
  // A list-valued field's header; then exactly size elements (list_* calls or struct_begin()).
  void field_list_begin(int16_t id, ThriftType element_type, size_t size);

  // List elements.
  void list_i32(int32_t value);
  void list_i64(int64_t value);
  void list_binary(std::string_view bytes);

  // Opens a struct that is not a field: the message itself or a list element.
  void struct_begin();
  // Ends the innermost open struct (writes the stop byte).
  void struct_end();

  const std::string& bytes() const { return out_; }
  // Returns the bytes written and empties the writer. Precondition: every struct was ended.
  std::string take();

 private:
  void field_header(int16_t id, ThriftType type);
  void varint(uint64_t value);

  std::string out_;
  int16_t last_field_id_ = 0;
  // The enclosing structs' last field ids, restored by struct_end().
  std::vector<int16_t> enclosing_field_ids_;
};

}  // namespace sluice
