// Decodes UTF-8 one byte at a time, for grammar matching over token bytes: a character may be
// split across tokens, so the matcher carries the partial character between tokens and asks
// which code points it can still become.
#pragma once

#include <cstdint>

namespace sluice {

class Utf8Decoder {
 public:
  enum class Status : uint8_t { Pending, Complete, Invalid };

  // Feeds one byte. Returns Complete when it ends a character (then code_point() is it), Pending
  // when more bytes are needed, Invalid for a byte no valid UTF-8 can have here (overlong forms
  // and surrogates included); after Invalid the decoder is reset.
  Status feed(uint8_t byte) {
    if (remaining_ == 0) {
      if (byte < 0x80) {
        value_ = byte;
        return Status::Complete;
      }
      if (byte >= 0xC2 && byte <= 0xDF) return start(byte & 0x1F, 1, 0x80);
      if (byte >= 0xE0 && byte <= 0xEF) return start(byte & 0x0F, 2, 0x800);
      if (byte >= 0xF0 && byte <= 0xF4) return start(byte & 0x07, 3, 0x10000);
      return Status::Invalid;
    }
    if ((byte & 0xC0) != 0x80) return invalid();
    value_ = (value_ << 6) | (byte & 0x3F);
    --remaining_;
    // Reject as soon as the prefix cannot be valid (overlong, surrogate, past U+10FFFF).
    uint32_t lo = range_lo(), hi = range_hi();
    if (hi < min_value_ || lo > 0x10FFFF || (lo >= 0xD800 && hi <= 0xDFFF)) return invalid();
    if (remaining_ > 0) return Status::Pending;
    if (value_ < min_value_ || value_ > 0x10FFFF || (value_ >= 0xD800 && value_ <= 0xDFFF)) {
      return invalid();
    }
    return Status::Complete;
  }

  bool is_pending() const { return remaining_ > 0; }
  uint32_t code_point() const { return value_; }
  // The smallest and largest code points the pending bytes can still become.
  uint32_t range_lo() const {
    uint32_t lo = value_ << (6 * remaining_);
    return lo < min_value_ ? min_value_ : lo;
  }
  uint32_t range_hi() const {
    uint32_t hi = (value_ << (6 * remaining_)) | ((1u << (6 * remaining_)) - 1);
    return hi > 0x10FFFF ? 0x10FFFF : hi;
  }
  bool operator==(const Utf8Decoder&) const = default;

 private:
  Status start(uint32_t bits, uint8_t remaining, uint32_t min_value) {
    value_ = bits;
    remaining_ = remaining;
    min_value_ = min_value;
    uint32_t lo = range_lo(), hi = range_hi();
    if (hi < min_value_ || lo > 0x10FFFF) return invalid();
    return Status::Pending;
  }
  Status invalid() {
    remaining_ = 0;
    value_ = 0;
    return Status::Invalid;
  }

  uint32_t value_ = 0;
  uint32_t min_value_ = 0;
  uint8_t remaining_ = 0;
};

}  // namespace sluice
