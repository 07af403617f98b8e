// The tokenizer interface. Implementations: SentencePiece .model files (libsentencepiece),
// llama2.c tokenizer.bin, and GGUF vocabularies ("llama" SentencePiece-style and "gpt2"
// byte-level BPE). Decoding works token by token on bytes; StreamingDetokenizer turns those
// bytes into text without ever emitting half a UTF-8 character.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace sluice {

enum class TokenKind : uint8_t {
  Normal,       // ordinary text piece
  Byte,         // a <0xNN> byte-fallback piece
  Control,      // BOS, EOS, <unk>-like control pieces: decode to nothing
  UserDefined,  // added tokens that decode to their text (e.g. <|im_start|>)
  Unknown,      // the <unk> piece
  Unused,
};

struct EncodeOptions {
  bool add_bos = true;         // prepend BOS (callers pass the model's rule, see add_bos_default)
  bool add_eos = false;        // append EOS
  bool parse_special = false;  // split out special/added token text such as "<|im_start|>"
};

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;

  // Returns the token ids of text. Never throws on any byte string (invalid UTF-8 is encoded
  // through byte fallback or replacement, per the vocabulary's rules), except for a broken
  // vocabulary that loaded but cannot encode some text (libsentencepiece's own consistency
  // checks): then Error naming the tokenizer file.
  virtual std::vector<int32_t> encode(std::string_view text, const EncodeOptions& options) const = 0;

  // Returns the bytes token id contributes to decoded text. at_sequence_start is true for the
  // first token after BOS (or the first token of a sequence with no BOS): SentencePiece-style
  // vocabularies drop the leading space there. Control tokens return "". Ids out of range return "".
  virtual std::string token_to_bytes(int32_t id, bool at_sequence_start) const = 0;

  // Returns the raw piece string as stored in the vocabulary (for display and debugging).
  virtual std::string token_text(int32_t id) const = 0;

  virtual TokenKind token_kind(int32_t id) const = 0;
  virtual int32_t vocab_size() const = 0;

  // Special ids; -1 when the vocabulary has none.
  virtual int32_t bos_id() const = 0;
  virtual int32_t eos_id() const = 0;
  // Whether the model's files ask for BOS to be prepended (add_bos_token).
  virtual bool add_bos_default() const = 0;

  // Extra ids that end generation besides eos_id() (e.g. <|eot_id|>, <|im_end|>).
  virtual std::vector<int32_t> extra_stop_ids() const { return {}; }

  // Short description: "sentencepiece (32000 pieces)", "gguf gpt2 (50257 tokens)".
  virtual std::string describe() const = 0;

  // Returns a lower bound on the number of tokens encode(text, ...) returns with any options,
  // found in one pass without encoding or allocating, so that a prompt that cannot fit a
  // context is refused before it is tokenized; 0 when the tokenizer knows no bound (it may drop
  // text: a normalizer that rewrites it, a vocabulary with no byte fallback).
  virtual size_t min_num_tokens(std::string_view /*text*/) const { return 0; }

  // Decodes a whole id sequence to bytes (possibly invalid UTF-8 if the ids split a
  // character). The first id counts as the sequence start unless it is BOS, in which case the
  // id after it does.
  std::string decode(std::span<const int32_t> ids) const;
};

// Returns the fewest tokens that can cover num_bytes of text when no token stands for more than
// max_token_bytes bytes of it (every byte covered once); 0 when max_token_bytes is 0 (no bound).
size_t min_tokens_covering(size_t num_bytes, size_t max_token_bytes);

}  // namespace sluice
