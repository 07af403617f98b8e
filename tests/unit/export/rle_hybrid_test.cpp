// The RLE / bit-packing hybrid of Parquet's levels, against bytes worked out by hand from
// Encodings.md (the spec's own bit-packing example included).
#include "engine/export/rle_hybrid.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace sluice {
namespace {

std::vector<uint8_t> rle_bytes(const std::vector<uint8_t>& values, int bit_width) {
  std::string out;
  append_rle_hybrid(out, values, bit_width);
  return {out.begin(), out.end()};
}

TEST(RleHybridTest, BitWidthCoversTheMaximum) {
  EXPECT_EQ(rle_bit_width(0), 0);
  EXPECT_EQ(rle_bit_width(1), 1);
  EXPECT_EQ(rle_bit_width(2), 2);
  EXPECT_EQ(rle_bit_width(3), 2);
  EXPECT_EQ(rle_bit_width(4), 3);
}

TEST(RleHybridTest, BitPackingMatchesTheSpecsExample) {
  // Encodings.md: 0..7 at bit width 3 pack to 10001000 11000110 11111010.
  std::string out;
  const std::vector<uint8_t> values = {0, 1, 2, 3, 4, 5, 6, 7};
  append_bit_packed(out, values, 3);
  EXPECT_EQ(std::vector<uint8_t>(out.begin(), out.end()), (std::vector<uint8_t>{0x88, 0xC6, 0xFA}));
}

TEST(RleHybridTest, ALongRunIsRunLengthEncodedAndTheTailBitPacked) {
  // Ten 1s: header 10 << 1 = 0x14, value 0x01. Then 0,1,0 in one bit-packed group of 8 (zero
  // padded): header (1 << 1) | 1 = 0x03, bits LSB first 0b00000010.
  const std::vector<uint8_t> values = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0};
  EXPECT_EQ(rle_bytes(values, 1), (std::vector<uint8_t>{0x14, 0x01, 0x03, 0x02}));
}

TEST(RleHybridTest, ShortRunsAreBitPackedInGroupsOfEight) {
  // 0,1,2,3 then nine 3s at width 2: the long run does not start a group, so both groups are
  // bit-packed: header (2 << 1) | 1, then 0b11100100, 0xFF, 0xFF, 0x00 (the last 4 padding).
  const std::vector<uint8_t> values = {0, 1, 2, 3, 3, 3, 3, 3, 3, 3, 3, 3};
  EXPECT_EQ(rle_bytes(values, 2), (std::vector<uint8_t>{0x05, 0xE4, 0xFF, 0xFF, 0x00}));
}

TEST(RleHybridTest, RunLengthsPastOneVarintByte) {
  // 300 2s at width 2: header 600 = varint 0xD8 0x04, value 0x02; then a lone 1.
  std::vector<uint8_t> values(300, 2);
  values.push_back(1);
  EXPECT_EQ(rle_bytes(values, 2), (std::vector<uint8_t>{0xD8, 0x04, 0x02, 0x03, 0x01, 0x00}));
}

TEST(RleHybridTest, ARunOfEightIsRunLengthEncodedAndOfSevenBitPacked) {
  // Eight 1s: header 8 << 1 = 0x10, value 0x01. Seven: one bit-packed group 0b01111111.
  EXPECT_EQ(rle_bytes(std::vector<uint8_t>(8, 1), 1), (std::vector<uint8_t>{0x10, 0x01}));
  EXPECT_EQ(rle_bytes(std::vector<uint8_t>(7, 1), 1), (std::vector<uint8_t>{0x03, 0x7F}));
}

TEST(RleHybridTest, NothingForNoValues) {
  EXPECT_TRUE(rle_bytes({}, 1).empty());
}

}  // namespace
}  // namespace sluice
