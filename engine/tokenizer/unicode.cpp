#include "engine/tokenizer/unicode.h"

#include <algorithm>

#include "engine/tokenizer/unicode_tables.h"

namespace sluice {

namespace {

// The well-formed byte ranges of Unicode's Table 3-7: a lead byte fixes the length and the
// allowed range of the second byte (which excludes overlongs, surrogates and > U+10FFFF);
// every later byte is a plain continuation byte 80..BF.
struct LeadRule {
  uint8_t num_bytes;
  uint8_t second_min;
  uint8_t second_max;
};

LeadRule lead_rule(uint8_t lead) {
  if (lead < 0x80) return {1, 0, 0};
  if (lead >= 0xC2 && lead <= 0xDF) return {2, 0x80, 0xBF};
  if (lead == 0xE0) return {3, 0xA0, 0xBF};
  if (lead == 0xED) return {3, 0x80, 0x9F};
  if (lead >= 0xE1 && lead <= 0xEF) return {3, 0x80, 0xBF};
  if (lead == 0xF0) return {4, 0x90, 0xBF};
  if (lead == 0xF4) return {4, 0x80, 0x8F};
  if (lead >= 0xF1 && lead <= 0xF3) return {4, 0x80, 0xBF};
  return {0, 0, 0};  // 80..C1 and F5..FF never start a character
}

}  // namespace

Utf8Char decode_utf8(std::string_view text, size_t offset) {
  const auto lead = static_cast<uint8_t>(text[offset]);
  const LeadRule rule = lead_rule(lead);
  if (rule.num_bytes == 0) return {0, 1, Utf8Status::Invalid};
  if (rule.num_bytes == 1) return {lead, 1, Utf8Status::Valid};

  char32_t codepoint = lead & (0xFF >> (rule.num_bytes + 1));
  for (uint8_t i = 1; i < rule.num_bytes; ++i) {
    if (offset + i >= text.size()) return {0, i, Utf8Status::Incomplete};
    const auto byte = static_cast<uint8_t>(text[offset + i]);
    const uint8_t low = i == 1 ? rule.second_min : 0x80;
    const uint8_t high = i == 1 ? rule.second_max : 0xBF;
    if (byte < low || byte > high) return {0, i, Utf8Status::Invalid};
    codepoint = (codepoint << 6) | (byte & 0x3F);
  }
  return {codepoint, rule.num_bytes, Utf8Status::Valid};
}

void append_utf8(std::string& out, char32_t codepoint) {
  if (codepoint > 0x10FFFF || (codepoint >= 0xD800 && codepoint <= 0xDFFF)) {
    codepoint = kReplacementCharacter;
  }
  if (codepoint < 0x80) {
    out += static_cast<char>(codepoint);
  } else if (codepoint < 0x800) {
    out += static_cast<char>(0xC0 | (codepoint >> 6));
    out += static_cast<char>(0x80 | (codepoint & 0x3F));
  } else if (codepoint < 0x10000) {
    out += static_cast<char>(0xE0 | (codepoint >> 12));
    out += static_cast<char>(0x80 | ((codepoint >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (codepoint & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (codepoint >> 18));
    out += static_cast<char>(0x80 | ((codepoint >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((codepoint >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (codepoint & 0x3F));
  }
}

std::string utf8_encode(char32_t codepoint) {
  std::string out;
  append_utf8(out, codepoint);
  return out;
}

std::string sanitize_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t offset = 0; offset < text.size();) {
    const Utf8Char c = decode_utf8(text, offset);
    if (c.status == Utf8Status::Valid) {
      out.append(text.substr(offset, c.num_bytes));
    } else {
      append_utf8(out, kReplacementCharacter);
    }
    offset += c.num_bytes;
  }
  return out;
}

bool is_valid_utf8(std::string_view text) {
  for (size_t offset = 0; offset < text.size();) {
    const Utf8Char c = decode_utf8(text, offset);
    if (c.status != Utf8Status::Valid) return false;
    offset += c.num_bytes;
  }
  return true;
}

UnicodeCategory unicode_category(char32_t codepoint) {
  if (codepoint > 0x10FFFF) return UnicodeCategory::Other;
  // The run containing codepoint is the last one whose start is <= codepoint. The sentinel
  // (codepoint << 8) | 0xFF sorts after every run starting at codepoint.
  const uint32_t key = (static_cast<uint32_t>(codepoint) << 8) | 0xFF;
  const uint32_t* begin = unicode_tables::kCategoryRuns;
  const uint32_t* end = begin + unicode_tables::kNumCategoryRuns;
  const uint32_t* run = std::upper_bound(begin, end, key) - 1;  // the table starts at U+0000
  return static_cast<UnicodeCategory>(*run & 0xFF);
}

bool is_unicode_whitespace(char32_t codepoint) {
  for (size_t i = 0; i < unicode_tables::kNumWhiteSpaceRanges; ++i) {
    if (codepoint < unicode_tables::kWhiteSpaceRanges[i][0]) return false;
    if (codepoint <= unicode_tables::kWhiteSpaceRanges[i][1]) return true;
  }
  return false;
}

}  // namespace sluice
