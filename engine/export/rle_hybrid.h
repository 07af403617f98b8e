// Parquet's run-length / bit-packing hybrid encoding (Encodings.md, "RLE = 3"), in which a data
// page stores its repetition and definition levels, and the bit-packing that PLAIN booleans use.
//
//   rle run         varint(count << 1), then the value in ceil(bit_width / 8) bytes
//   bit-packed run  varint((count / 8) << 1 | 1), then count values of bit_width bits each,
//                   packed from each byte's least significant bit up; count is a multiple of 8
//                   (the last run is padded with zeros: a reader stops at the page's num_values)
//
// A run of 8 or more equal values becomes an rle run, everything between such runs bit-packed
// runs, so the bytes depend on the values alone (the writer is deterministic).
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace sluice {

// Returns the bits needed for values 0..max_value (0 for max_value 0).
int rle_bit_width(uint32_t max_value);

// Appends values bit-packed, bit_width bits each, least significant bit first, padded with zero
// bits to a whole byte. Precondition: 0 < bit_width <= 8 and every value < 2^bit_width.
void append_bit_packed(std::string& out, std::span<const uint8_t> values, int bit_width);

// Appends values in the hybrid encoding (without the 4-byte length that a v1 data page puts
// before levels). Precondition: 0 < bit_width <= 8 and every value < 2^bit_width.
void append_rle_hybrid(std::string& out, std::span<const uint8_t> values, int bit_width);

}  // namespace sluice
