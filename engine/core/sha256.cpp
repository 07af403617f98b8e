#include "engine/core/sha256.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "engine/core/error.h"

namespace sluice {
namespace {

// The first 32 bits of the fractional parts of the cube roots of the first 64 primes (FIPS 180-4,
// section 4.2.2).
constexpr std::array<uint32_t, 64> kRoundConstants = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

// The first 32 bits of the fractional parts of the square roots of the first 8 primes (5.3.3).
constexpr std::array<uint32_t, 8> kInitialState = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

constexpr size_t kFileChunkBytes = size_t{1} << 20;

inline uint32_t rotate_right(uint32_t x, int n) {
  return (x >> n) | (x << (32 - n));
}

inline uint32_t load_big_endian(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

}  // namespace

Sha256::Sha256() {
  reset();
}

void Sha256::reset() {
  state_ = kInitialState;
  num_buffered_bytes_ = 0;
  num_message_bytes_ = 0;
}

void Sha256::compress(const uint8_t* block) {
  std::array<uint32_t, 64> w{};
  for (int t = 0; t < 16; ++t) w[t] = load_big_endian(block + 4 * t);
  for (int t = 16; t < 64; ++t) {
    const uint32_t s0 = rotate_right(w[t - 15], 7) ^ rotate_right(w[t - 15], 18) ^ (w[t - 15] >> 3);
    const uint32_t s1 = rotate_right(w[t - 2], 17) ^ rotate_right(w[t - 2], 19) ^ (w[t - 2] >> 10);
    w[t] = w[t - 16] + s0 + w[t - 7] + s1;
  }
  uint32_t a = state_[0], b = state_[1], c = state_[2], d = state_[3];
  uint32_t e = state_[4], f = state_[5], g = state_[6], h = state_[7];
  for (int t = 0; t < 64; ++t) {
    const uint32_t sum1 = rotate_right(e, 6) ^ rotate_right(e, 11) ^ rotate_right(e, 25);
    const uint32_t choose = (e & f) ^ (~e & g);
    const uint32_t temp1 = h + sum1 + choose + kRoundConstants[t] + w[t];
    const uint32_t sum0 = rotate_right(a, 2) ^ rotate_right(a, 13) ^ rotate_right(a, 22);
    const uint32_t majority = (a & b) ^ (a & c) ^ (b & c);
    const uint32_t temp2 = sum0 + majority;
    h = g;
    g = f;
    f = e;
    e = d + temp1;
    d = c;
    c = b;
    b = a;
    a = temp1 + temp2;
  }
  state_[0] += a;
  state_[1] += b;
  state_[2] += c;
  state_[3] += d;
  state_[4] += e;
  state_[5] += f;
  state_[6] += g;
  state_[7] += h;
}

void Sha256::update(const void* data, size_t num_bytes) {
  const auto* bytes = static_cast<const uint8_t*>(data);
  num_message_bytes_ += num_bytes;
  if (num_buffered_bytes_ > 0) {
    const size_t take = std::min(num_bytes, buffer_.size() - num_buffered_bytes_);
    std::memcpy(buffer_.data() + num_buffered_bytes_, bytes, take);
    num_buffered_bytes_ += take;
    bytes += take;
    num_bytes -= take;
    if (num_buffered_bytes_ < buffer_.size()) return;
    compress(buffer_.data());
    num_buffered_bytes_ = 0;
  }
  // Whole blocks straight from the caller's memory: no copy for the bulk of a file.
  for (; num_bytes >= buffer_.size(); bytes += buffer_.size(), num_bytes -= buffer_.size())
    compress(bytes);
  std::memcpy(buffer_.data(), bytes, num_bytes);
  num_buffered_bytes_ = num_bytes;
}

std::string Sha256::finish_hex() {
  const uint64_t num_message_bits = num_message_bytes_ * 8;
  // Padding: one 1 bit, zeros up to 56 bytes mod 64, then the bit length big-endian (5.1.1).
  const uint8_t one_bit = 0x80;
  update(&one_bit, 1);
  const uint8_t zero = 0;
  while (num_buffered_bytes_ != 56) update(&zero, 1);
  uint8_t length[8];
  for (int i = 0; i < 8; ++i) length[i] = static_cast<uint8_t>(num_message_bits >> (56 - 8 * i));
  update(length, sizeof(length));

  static constexpr char kHexDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(64);
  for (const uint32_t word : state_) {
    for (int shift = 28; shift >= 0; shift -= 4) hex.push_back(kHexDigits[(word >> shift) & 0xf]);
  }
  reset();
  return hex;
}

std::string sha256_hex(std::string_view data) {
  Sha256 hash;
  hash.update(data.data(), data.size());
  return hash.finish_hex();
}

std::string sha256_file_hex(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) fail(path, ": cannot open to hash: ", std::strerror(errno));
  Sha256 hash;
  std::vector<uint8_t> chunk(kFileChunkBytes);
  for (;;) {
    const size_t num_read = std::fread(chunk.data(), 1, chunk.size(), file);
    hash.update(chunk.data(), num_read);
    if (num_read < chunk.size()) break;
  }
  const bool had_error = std::ferror(file) != 0;
  const int err = errno;
  std::fclose(file);
  if (had_error) fail(path, ": read error while hashing: ", std::strerror(err));
  return hash.finish_hex();
}

}  // namespace sluice
