#include "engine/export/rle_hybrid.h"

#include <algorithm>
#include <cassert>
#include <cstdint>

namespace sluice {
namespace {

// Runs shorter than this are cheaper bit-packed (an rle run costs a header and a value byte).
constexpr size_t kMinRleRun = 8;

void append_rle_varint(std::string& out, uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7F) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

// Returns how many values from values[start] on equal values[start], counting at most limit.
size_t equal_run_length(std::span<const uint8_t> values, size_t start, size_t limit = SIZE_MAX) {
  size_t end = start + 1;
  while (end < values.size() && end - start < limit && values[end] == values[start]) ++end;
  return end - start;
}

}  // namespace

int rle_bit_width(uint32_t max_value) {
  int width = 0;
  while (max_value != 0) {
    ++width;
    max_value >>= 1;
  }
  return width;
}

void append_bit_packed(std::string& out, std::span<const uint8_t> values, int bit_width) {
  assert(bit_width > 0 && bit_width <= 8 && "levels and booleans take 1 to 8 bits");
  uint32_t buffer = 0;  // bits not yet written, the oldest in the low bits
  int num_buffered_bits = 0;
  for (const uint8_t value : values) {
    assert(value < (1u << bit_width) && "a value fits its bit width");
    buffer |= static_cast<uint32_t>(value) << num_buffered_bits;
    num_buffered_bits += bit_width;
    while (num_buffered_bits >= 8) {
      out.push_back(static_cast<char>(buffer & 0xFF));
      buffer >>= 8;
      num_buffered_bits -= 8;
    }
  }
  if (num_buffered_bits > 0) out.push_back(static_cast<char>(buffer & 0xFF));
}

void append_rle_hybrid(std::string& out, std::span<const uint8_t> values, int bit_width) {
  assert(bit_width > 0 && bit_width <= 8 && "levels take 1 to 8 bits");
  size_t i = 0;
  while (i < values.size()) {
    const size_t run = equal_run_length(values, i);
    if (run >= kMinRleRun) {
      append_rle_varint(out, static_cast<uint64_t>(run) << 1);
      out.push_back(static_cast<char>(values[i]));  // bit_width <= 8: one byte
      i += run;
      continue;
    }
    // Bit-pack groups of 8 until a group starts a long run of equal values (or the end).
    const size_t start = i;
    do {
      i += 8;
    } while (i < values.size() && equal_run_length(values, i, kMinRleRun) < kMinRleRun);
    const size_t num_groups = (i - start) / 8;
    append_rle_varint(out, (static_cast<uint64_t>(num_groups) << 1) | 1);
    // The last group may run past the end: its missing values are zeros.
    uint8_t group[8];
    for (size_t g = 0; g < num_groups; ++g) {
      const size_t begin = start + 8 * g;
      const size_t count = std::min<size_t>(8, values.size() - std::min(values.size(), begin));
      std::fill(std::begin(group), std::end(group), uint8_t{0});
      std::copy_n(values.begin() + static_cast<std::ptrdiff_t>(begin), count, group);
      append_bit_packed(out, group, bit_width);
    }
  }
}

}  // namespace sluice
