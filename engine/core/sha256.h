// SHA-256 (FIPS 180-4). Jobs record the digest of their source file so that a resume can tell
// whether the instruction file changed underneath it; the digest is streamed, so multi-gigabyte
// files cost no memory.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace sluice {

class Sha256 {
 public:
  Sha256();

  // Feeds num_bytes bytes; may be called any number of times before finish_hex().
  void update(const void* data, size_t num_bytes);
  // Pads, finishes and returns the digest as 64 lowercase hex digits. The object is then reset,
  // ready for a new message.
  std::string finish_hex();

 private:
  void reset();
  void compress(const uint8_t* block);  // block: [64] bytes

  std::array<uint32_t, 8> state_{};
  std::array<uint8_t, 64> buffer_{};
  size_t num_buffered_bytes_ = 0;
  uint64_t num_message_bytes_ = 0;
};

// Returns the SHA-256 of data as 64 lowercase hex digits.
std::string sha256_hex(std::string_view data);

// Returns the SHA-256 of a file's contents, read in chunks. Throws Error naming the file when it
// cannot be opened or read.
std::string sha256_file_hex(const std::string& path);

}  // namespace sluice
