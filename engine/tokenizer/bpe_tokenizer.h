// Byte-level BPE (GPT-2, Llama 3, Qwen2, SmolLM...): the pre-tokenizer cuts text into words,
// each word's bytes are written in the byte-level alphabet (byte_level.h), and adjacent
// symbols merge by merge rank (lowest first) until none may merge. Built from a plain BpeVocab
// so that any file format can feed it: GGUF "gpt2" vocabularies (gguf_bpe_tokenizer.h) and
// Hugging Face tokenizer.json (hf_tokenizer_json.h).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/tokenizer/pre_tokenizer.h"
#include "engine/tokenizer/special_token_splitter.h"
#include "engine/tokenizer/tokenizer.h"

namespace sluice {

struct BpeVocab {
  std::string source;               // the file it came from, for errors and describe()
  std::vector<std::string> tokens;  // [vocab_size], in the byte-level alphabet (added tokens as
                                    // plain text); empty strings mark unassigned ids
  std::vector<TokenKind> kinds;     // [vocab_size]: Normal, Control, UserDefined or Unused
  std::vector<std::string> merges;  // "left right" in the byte-level alphabet, rank = index
  PreTokenizer pre_tokenizer = PreTokenizer::Gpt2;
  // Use a word's own token when the vocabulary has it, before any merging (Hugging Face's
  // ignore_merges, set by Llama 3's tokenizer.json).
  bool ignore_merges = false;
  int32_t bos_id = -1;
  int32_t eos_id = -1;
  bool add_bos = false;
  bool add_eos = false;
  std::vector<int32_t> extra_stop_ids;
};

class BpeTokenizer final : public Tokenizer {
 public:
  // Throws Error naming vocab.source when kinds and tokens differ in size, a merge is not two
  // space-separated symbols, or BOS/EOS lie outside the vocabulary.
  explicit BpeTokenizer(BpeVocab vocab);

  std::vector<int32_t> encode(std::string_view text, const EncodeOptions& options) const override;
  std::string token_to_bytes(int32_t id, bool at_sequence_start) const override;
  std::string token_text(int32_t id) const override;
  TokenKind token_kind(int32_t id) const override;
  int32_t vocab_size() const override { return static_cast<int32_t>(vocab_.tokens.size()); }
  int32_t bos_id() const override { return vocab_.bos_id; }
  int32_t eos_id() const override { return vocab_.eos_id; }
  bool add_bos_default() const override { return vocab_.add_bos; }
  std::vector<int32_t> extra_stop_ids() const override { return vocab_.extra_stop_ids; }
  std::string describe() const override;
  size_t min_num_tokens(std::string_view text) const override {
    return min_tokens_covering(text.size(), max_token_bytes_);
  }

  // Returns the id of a token (byte-level text or an added token's text), or -1.
  int32_t token_id(const std::string& text) const;

 private:
  // Appends the ids of one pre-tokenized word.
  void encode_word(std::string_view word, std::vector<int32_t>& ids) const;

  BpeVocab vocab_;
  std::unordered_map<std::string, int32_t> token_ids_;
  std::unordered_map<std::string, int32_t> merge_ranks_;  // "left right" -> rank
  SpecialTokenSplitter special_tokens_;
  // The most input bytes one token stands for (its text, which in the byte-level alphabet is
  // at least as long as the bytes it decodes to); 0 when some byte has no token of its own, so
  // encode_word may drop it and no bound holds.
  size_t max_token_bytes_ = 0;
};

}  // namespace sluice
