#include "engine/tokenizer/streaming_detokenizer.h"

#include "engine/tokenizer/unicode.h"

namespace sluice {

StreamingDetokenizer::StreamingDetokenizer(const Tokenizer& tokenizer, bool at_sequence_start)
    : tokenizer_(tokenizer), is_at_start_(at_sequence_start) {}

std::string StreamingDetokenizer::push(int32_t id) {
  // Mirrors Tokenizer::decode: a leading BOS leaves the sequence start to the next token.
  if (is_at_start_ && id >= 0 && id == tokenizer_.bos_id()) return "";
  pending_ += tokenizer_.token_to_bytes(id, is_at_start_);
  is_at_start_ = false;
  return drain(false);
}

std::string StreamingDetokenizer::finish() {
  return drain(true);
}

std::string StreamingDetokenizer::drain(bool is_final) {
  std::string out;
  size_t offset = 0;
  while (offset < pending_.size()) {
    const Utf8Char c = decode_utf8(pending_, offset);
    if (c.status == Utf8Status::Incomplete && !is_final) break;  // wait for the next token
    if (c.status == Utf8Status::Valid) {
      out.append(pending_, offset, c.num_bytes);
    } else {
      append_utf8(out, kReplacementCharacter);
    }
    offset += c.num_bytes;
  }
  pending_.erase(0, offset);
  text_ += out;
  return out;
}

}  // namespace sluice
