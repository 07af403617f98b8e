// Turns generated token ids into text as they arrive. Tokens carry bytes, not characters: a
// character outside the vocabulary arrives as several <0xNN> byte tokens, and byte-level BPE
// tokens can split a character too. The detokenizer emits only whole characters, holds back an
// incomplete one until its remaining bytes arrive, and replaces ill-formed bytes with U+FFFD,
// so what it emits is always valid UTF-8 and, concatenated, equals sanitize_utf8(decode(ids)).
#pragma once

#include <cstdint>
#include <string>

#include "engine/tokenizer/tokenizer.h"

namespace sluice {

class StreamingDetokenizer {
 public:
  // at_sequence_start: whether the first pushed token (or the one after a leading BOS) starts
  // the sequence, so a SentencePiece leading space is dropped; false when continuing after a
  // prompt. The tokenizer must outlive the detokenizer.
  StreamingDetokenizer(const Tokenizer& tokenizer, bool at_sequence_start);

  // Adds one token; returns the newly complete text (possibly empty).
  std::string push(int32_t id);

  // Flushes the held-back bytes, an incomplete character as U+FFFD; returns that text.
  std::string finish();

  // Returns everything emitted so far.
  const std::string& text() const { return text_; }

 private:
  // Moves every complete character of pending_ to the output; with is_final, the rest as well.
  std::string drain(bool is_final);

  const Tokenizer& tokenizer_;
  bool is_at_start_;
  std::string pending_;  // bytes not yet emitted: at most an incomplete character
  std::string text_;
};

}  // namespace sluice
