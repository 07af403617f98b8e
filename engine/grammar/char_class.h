// A set of Unicode code points, kept as sorted, disjoint, non-adjacent inclusive ranges. Grammar
// terminals are character classes; a literal character is a class of one code point.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace sluice {

inline constexpr uint32_t kMaxCodePoint = 0x10FFFF;

class CharClass {
 public:
  CharClass() = default;
  // Returns the class of the one code point cp.
  static CharClass single(uint32_t cp);
  // Returns the class of [lo, hi]. Precondition: lo <= hi <= kMaxCodePoint.
  static CharClass range(uint32_t lo, uint32_t hi);
  // Returns every code point.
  static CharClass any();

  // Adds [lo, hi] (lo <= hi), merging with what is there.
  void add_range(uint32_t lo, uint32_t hi);
  void add(const CharClass& other);
  // Returns the code points of [0, kMaxCodePoint] not in this class.
  CharClass complement() const;
  // Returns the code points in this class and not in other.
  CharClass minus(const CharClass& other) const;

  bool contains(uint32_t cp) const;
  // Whether some code point of [lo, hi] is in the class.
  bool intersects(uint32_t lo, uint32_t hi) const;
  bool empty() const { return ranges_.empty(); }
  const std::vector<std::pair<uint32_t, uint32_t>>& ranges() const { return ranges_; }
  bool operator==(const CharClass&) const = default;

 private:
  std::vector<std::pair<uint32_t, uint32_t>> ranges_;  // sorted, disjoint, non-adjacent
  uint64_t ascii_bits_[2] = {0, 0};                    // fast path for code points < 128
  void update_ascii_bits();
};

}  // namespace sluice
