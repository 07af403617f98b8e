#include "engine/tokenizer/byte_level.h"

#include <array>

#include "engine/tokenizer/unicode.h"

namespace sluice {

namespace {

// The three printable ranges GPT-2 keeps as themselves: '!'..'~', '¡'..'¬', '®'..'ÿ'.
constexpr bool is_kept_byte(int byte) {
  return (byte >= 0x21 && byte <= 0x7E) || (byte >= 0xA1 && byte <= 0xAC) ||
         (byte >= 0xAE && byte <= 0xFF);
}

// Every other byte, in increasing order, takes the next codepoint from U+0100.
constexpr std::array<char32_t, 256> make_byte_table() {
  std::array<char32_t, 256> table{};
  char32_t next = 0x100;
  for (int byte = 0; byte < 256; ++byte) table[byte] = is_kept_byte(byte) ? byte : next++;
  return table;
}

constexpr std::array<char32_t, 256> kByteToCodepoint = make_byte_table();

// The alphabet lies within U+0021..U+0143, so the inverse fits a small table.
constexpr char32_t kMaxAlphabetCodepoint = 0x143;

constexpr std::array<int16_t, kMaxAlphabetCodepoint + 1> make_inverse_table() {
  std::array<int16_t, kMaxAlphabetCodepoint + 1> table{};
  for (auto& entry : table) entry = -1;
  for (int byte = 0; byte < 256; ++byte) table[kByteToCodepoint[byte]] = static_cast<int16_t>(byte);
  return table;
}

constexpr std::array<int16_t, kMaxAlphabetCodepoint + 1> kCodepointToByte = make_inverse_table();

}  // namespace

char32_t byte_to_byte_level(uint8_t byte) {
  return kByteToCodepoint[byte];
}

std::optional<uint8_t> byte_level_to_byte(char32_t codepoint) {
  if (codepoint > kMaxAlphabetCodepoint || kCodepointToByte[codepoint] < 0) return std::nullopt;
  return static_cast<uint8_t>(kCodepointToByte[codepoint]);
}

std::string encode_byte_level(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (const char byte : bytes) append_utf8(out, kByteToCodepoint[static_cast<uint8_t>(byte)]);
  return out;
}

std::string decode_byte_level(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t offset = 0; offset < text.size();) {
    const Utf8Char c = decode_utf8(text, offset);
    const auto byte =
        c.status == Utf8Status::Valid ? byte_level_to_byte(c.codepoint) : std::nullopt;
    if (byte) {
      out.push_back(static_cast<char>(*byte));
    } else {
      out.append(text.substr(offset, c.num_bytes));
    }
    offset += c.num_bytes;
  }
  return out;
}

}  // namespace sluice
