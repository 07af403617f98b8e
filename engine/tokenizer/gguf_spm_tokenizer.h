// A GGUF "llama" vocabulary: SentencePiece BPE re-implemented from the stored pieces, scores and
// token types, as llama.cpp does. Spaces become "▁", a space is prefixed to the text when
// add_space_prefix is set, characters merge pairwise (the pair whose merged piece scores best
// first), and characters no piece covers fall back to <0xNN> byte pieces.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/tokenizer/gguf_vocab.h"
#include "engine/tokenizer/special_token_splitter.h"
#include "engine/tokenizer/tokenizer.h"

namespace sluice {

class GgufSpmTokenizer final : public Tokenizer {
 public:
  // Precondition: vocab comes from read_gguf_vocab (sizes consistent). Throws Error naming the
  // file when the vocabulary has no scores.
  explicit GgufSpmTokenizer(GgufVocab vocab);

  std::vector<int32_t> encode(std::string_view text, const EncodeOptions& options) const override;
  std::string token_to_bytes(int32_t id, bool at_sequence_start) const override;
  std::string token_text(int32_t id) const override;
  TokenKind token_kind(int32_t id) const override;
  int32_t vocab_size() const override { return vocab_.size(); }
  int32_t bos_id() const override { return vocab_.bos_id; }
  int32_t eos_id() const override { return vocab_.eos_id; }
  bool add_bos_default() const override { return add_bos_; }
  std::vector<int32_t> extra_stop_ids() const override { return vocab_.extra_stop_ids; }
  std::string describe() const override;
  size_t min_num_tokens(std::string_view text) const override {
    return min_tokens_covering(text.size(), max_token_bytes_);
  }

 private:
  // Appends the ids of raw text (no special tokens).
  void encode_text(std::string_view text, std::vector<int32_t>& ids) const;
  int32_t find_mergeable(const std::string& piece) const;

  GgufVocab vocab_;
  bool add_bos_ = true;
  bool add_space_prefix_ = true;
  // Pieces that merging may produce and raw characters may map to: normal and user-defined
  // ones. Control, byte and unknown pieces are reserved, as in libsentencepiece.
  std::unordered_map<std::string, int32_t> mergeable_ids_;
  std::array<int32_t, 256> byte_ids_{};  // <0xNN> piece of each byte, else unk
  SpecialTokenSplitter special_tokens_;
  // The most input bytes one token stands for (a piece's text is at least as long: "▁" is 3
  // bytes for one space, <0xNN> 6 for one byte); 0 when a byte has neither a byte piece nor
  // unk, so encode_text may drop it and no bound holds.
  size_t max_token_bytes_ = 0;
};

}  // namespace sluice
