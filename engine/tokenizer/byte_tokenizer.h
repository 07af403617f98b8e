// A tokenizer of raw bytes for models with no vocabulary of their own (dummy-weight benchmark
// models): id 1 is BOS, 2 is EOS, 3 + b is byte b; ids past 258 decode to nothing.
#pragma once

#include "engine/tokenizer/tokenizer.h"

namespace sluice {

class ByteTokenizer final : public Tokenizer {
 public:
  // vocab_size: the model's vocabulary (at least 259).
  explicit ByteTokenizer(int32_t vocab_size);

  std::vector<int32_t> encode(std::string_view text, const EncodeOptions& options) const override;
  std::string token_to_bytes(int32_t id, bool at_sequence_start) const override;
  std::string token_text(int32_t id) const override;
  TokenKind token_kind(int32_t id) const override;
  int32_t vocab_size() const override { return vocab_size_; }
  int32_t bos_id() const override { return 1; }
  int32_t eos_id() const override { return 2; }
  bool add_bos_default() const override { return true; }
  std::string describe() const override;
  size_t min_num_tokens(std::string_view text) const override { return text.size(); }

 private:
  int32_t vocab_size_;
};

}  // namespace sluice
