#include "engine/tokenizer/byte_tokenizer.h"

#include "engine/core/error.h"

namespace sluice {

namespace {
constexpr int32_t kFirstByteId = 3;
}  // namespace

ByteTokenizer::ByteTokenizer(int32_t vocab_size) : vocab_size_(vocab_size) {
  if (vocab_size < kFirstByteId + 256)
    fail("byte tokenizer: the vocabulary needs at least 259 ids, not ", vocab_size);
}

std::vector<int32_t> ByteTokenizer::encode(std::string_view text,
                                           const EncodeOptions& options) const {
  std::vector<int32_t> ids;
  ids.reserve(text.size() + 2);
  if (options.add_bos) ids.push_back(bos_id());
  for (const char c : text) ids.push_back(kFirstByteId + static_cast<unsigned char>(c));
  if (options.add_eos) ids.push_back(eos_id());
  return ids;
}

std::string ByteTokenizer::token_to_bytes(int32_t id, bool) const {
  if (id < kFirstByteId || id >= kFirstByteId + 256) return "";
  return std::string(1, static_cast<char>(id - kFirstByteId));
}

std::string ByteTokenizer::token_text(int32_t id) const {
  if (id == 1) return "<s>";
  if (id == 2) return "</s>";
  if (id >= kFirstByteId && id < kFirstByteId + 256)
    return str_cat("<0x", std::hex, id - kFirstByteId, ">");
  return "";
}

TokenKind ByteTokenizer::token_kind(int32_t id) const {
  if (id == 1 || id == 2) return TokenKind::Control;
  if (id >= kFirstByteId && id < kFirstByteId + 256) return TokenKind::Byte;
  return TokenKind::Unused;
}

std::string ByteTokenizer::describe() const {
  return str_cat("bytes (", vocab_size_, " ids)");
}

}  // namespace sluice
