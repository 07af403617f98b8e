#include "engine/grammar/char_class.h"

#include <algorithm>
#include <cassert>

namespace sluice {

CharClass CharClass::single(uint32_t cp) {
  return range(cp, cp);
}

CharClass CharClass::range(uint32_t lo, uint32_t hi) {
  CharClass result;
  result.add_range(lo, hi);
  return result;
}

CharClass CharClass::any() {
  return range(0, kMaxCodePoint);
}

void CharClass::add_range(uint32_t lo, uint32_t hi) {
  assert(lo <= hi && hi <= kMaxCodePoint);  // callers validate their input first
  ranges_.emplace_back(lo, hi);
  std::sort(ranges_.begin(), ranges_.end());
  std::vector<std::pair<uint32_t, uint32_t>> merged;
  for (const auto& r : ranges_) {
    if (!merged.empty() && r.first <= merged.back().second + 1) {
      merged.back().second = std::max(merged.back().second, r.second);
    } else {
      merged.push_back(r);
    }
  }
  ranges_ = std::move(merged);
  update_ascii_bits();
}

void CharClass::add(const CharClass& other) {
  for (const auto& r : other.ranges_) add_range(r.first, r.second);
}

CharClass CharClass::complement() const {
  CharClass result;
  uint32_t next = 0;
  for (const auto& r : ranges_) {
    if (r.first > next) result.ranges_.emplace_back(next, r.first - 1);
    next = r.second + 1;
  }
  if (next <= kMaxCodePoint) result.ranges_.emplace_back(next, kMaxCodePoint);
  result.update_ascii_bits();
  return result;
}

CharClass CharClass::minus(const CharClass& other) const {
  CharClass keep = other.complement();
  CharClass result;
  for (const auto& a : ranges_) {
    for (const auto& b : keep.ranges_) {
      uint32_t lo = std::max(a.first, b.first);
      uint32_t hi = std::min(a.second, b.second);
      if (lo <= hi) result.ranges_.emplace_back(lo, hi);
    }
  }
  result.update_ascii_bits();
  return result;
}

bool CharClass::contains(uint32_t cp) const {
  if (cp < 128) return (ascii_bits_[cp >> 6] >> (cp & 63)) & 1;
  auto it = std::upper_bound(ranges_.begin(), ranges_.end(), std::make_pair(cp, kMaxCodePoint + 1));
  if (it == ranges_.begin()) return false;
  --it;
  return cp >= it->first && cp <= it->second;
}

bool CharClass::intersects(uint32_t lo, uint32_t hi) const {
  for (const auto& r : ranges_) {
    if (r.first <= hi && lo <= r.second) return true;
  }
  return false;
}

void CharClass::update_ascii_bits() {
  ascii_bits_[0] = ascii_bits_[1] = 0;
  for (const auto& r : ranges_) {
    for (uint32_t cp = r.first; cp <= std::min<uint32_t>(r.second, 127); ++cp) {
      ascii_bits_[cp >> 6] |= uint64_t{1} << (cp & 63);
    }
  }
}

}  // namespace sluice
