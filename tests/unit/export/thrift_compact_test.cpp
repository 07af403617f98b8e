// The Thrift compact protocol against bytes worked out by hand from the protocol's spec (zigzag
// varints, field-id deltas and the long form, list headers, nested structs, doubles).
#include "engine/export/thrift_compact.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace sluice {
namespace {

std::vector<uint8_t> thrift_bytes(const ThriftCompactWriter& writer) {
  const std::string& bytes = writer.bytes();
  return {bytes.begin(), bytes.end()};
}

TEST(ThriftCompactTest, ZigzagMapsSignedToUnsignedAlternately) {
  EXPECT_EQ(thrift_zigzag32(0), 0u);
  EXPECT_EQ(thrift_zigzag32(-1), 1u);
  EXPECT_EQ(thrift_zigzag32(1), 2u);
  EXPECT_EQ(thrift_zigzag32(-2), 3u);
  EXPECT_EQ(thrift_zigzag32(std::numeric_limits<int32_t>::max()), 0xFFFFFFFEu);
  EXPECT_EQ(thrift_zigzag32(std::numeric_limits<int32_t>::min()), 0xFFFFFFFFu);
  EXPECT_EQ(thrift_zigzag64(-3), 5u);
  EXPECT_EQ(thrift_zigzag64(std::numeric_limits<int64_t>::min()), 0xFFFFFFFFFFFFFFFFull);
}

TEST(ThriftCompactTest, FieldsUseDeltasThenTheLongFormPastFifteen) {
  ThriftCompactWriter w;
  w.struct_begin();
  w.field_i32(1, 0);
  w.field_i32(2, -1);
  w.field_i64(3, 300);       // zigzag 600 = 0x258: varint 0xD8 0x04
  w.field_binary(20, "ab");  // delta 17: type byte, then zigzag(20) = 40
  w.field_bool(21, true);    // the value is the type: 1
  w.field_bool(22, false);   // 2
  w.struct_end();
  const std::vector<uint8_t> expected = {0x15, 0x00, 0x15, 0x01, 0x16, 0xD8, 0x04, 0x08,
                                         0x28, 0x02, 'a',  'b',  0x11, 0x12, 0x00};
  EXPECT_EQ(thrift_bytes(w), expected);
}

TEST(ThriftCompactTest, ADeltaOfSixteenTakesTheLongForm) {
  ThriftCompactWriter w;
  w.struct_begin();
  w.field_i32(15, 1);  // delta 15: the short form's last
  w.field_i32(31, 1);  // delta 16: type 0x05, then zigzag(31) = 62
  w.struct_end();
  EXPECT_EQ(thrift_bytes(w), (std::vector<uint8_t>{0xF5, 0x02, 0x05, 0x3E, 0x02, 0x00}));
}

TEST(ThriftCompactTest, ListsAndNestedStructsKeepTheirOwnFieldIds) {
  ThriftCompactWriter w;
  w.struct_begin();
  w.field_list_begin(1, ThriftType::I32, 3);  // (3 << 4) | 5
  w.list_i32(1);
  w.list_i32(-1);
  w.list_i32(64);           // zigzag 128: 0x80 0x01
  w.field_struct_begin(2);  // delta 1 from the list: 0x1C
  w.field_i32(5, 7);        // the nested struct counts from 0: delta 5
  w.struct_end();
  w.field_i32(3, 1);  // back in the outer struct: delta 1 from field 2
  w.struct_end();
  const std::vector<uint8_t> expected = {0x19, 0x35, 0x02, 0x01, 0x80, 0x01, 0x1C,
                                         0x55, 0x0E, 0x00, 0x15, 0x02, 0x00};
  EXPECT_EQ(thrift_bytes(w), expected);
}

TEST(ThriftCompactTest, ListsOfFifteenOrMoreCarryTheirSizeAsAVarint) {
  ThriftCompactWriter w;
  w.struct_begin();
  w.field_list_begin(4, ThriftType::Binary, 15);
  for (int i = 0; i < 15; ++i) w.list_binary("");
  w.struct_end();
  std::vector<uint8_t> expected = {0x49, 0xF8, 0x0F};
  expected.insert(expected.end(), 15, 0x00);  // each an empty binary: length 0
  expected.push_back(0x00);
  EXPECT_EQ(thrift_bytes(w), expected);
}

TEST(ThriftCompactTest, ListsOfStructsAndDoubles) {
  ThriftCompactWriter w;
  w.struct_begin();
  w.field_list_begin(1, ThriftType::Struct, 2);
  w.struct_begin();
  w.field_i64(1, -300);  // zigzag 599 = 0x257: 0xD7 0x04
  w.struct_end();
  w.struct_begin();
  w.struct_end();
  w.field_double(2, 1.0);  // delta 1 from the list; 0x3FF0000000000000 little-endian
  w.struct_end();
  const std::vector<uint8_t> expected = {0x19, 0x2C, 0x16, 0xD7, 0x04, 0x00, 0x00, 0x17, 0x00,
                                         0x00, 0x00, 0x00, 0x00, 0x00, 0xF0, 0x3F, 0x00};
  EXPECT_EQ(thrift_bytes(w), expected);
}

TEST(ThriftCompactTest, TakeEmptiesTheWriter) {
  ThriftCompactWriter w;
  w.struct_begin();
  w.field_i32(1, 1);
  w.struct_end();
  EXPECT_EQ(w.take(), std::string("\x15\x02\x00", 3));
  EXPECT_TRUE(w.bytes().empty());
  w.struct_begin();
  w.field_i32(1, 2);  // ids start again from 0
  w.struct_end();
  EXPECT_EQ(w.take(), std::string("\x15\x04\x00", 3));
}

}  // namespace
}  // namespace sluice
