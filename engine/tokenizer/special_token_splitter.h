// Splits text on the literal content of special tokens before a tokenizer's normal algorithm
// runs, so "<|im_start|>user" becomes the token <|im_start|> followed by the text "user".
// Follows llama.cpp's rule: user-defined (added) tokens are always split out, as SentencePiece
// and Hugging Face do; control tokens (BOS, EOS, <unk>, chat markers) only when the caller asks
// (EncodeOptions::parse_special), so user text that happens to contain "</s>" stays text.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sluice {

struct SpecialToken {
  std::string text;
  int32_t id = -1;
  bool is_always_split = false;  // true for user-defined tokens, false for control tokens
};

// A piece of the input: raw text (token_id < 0) or one special token.
struct TextFragment {
  std::string_view text;
  int32_t token_id = -1;

  // Returns true for a special token, false for raw text.
  bool is_token() const { return token_id >= 0; }
};

class SpecialTokenSplitter {
 public:
  SpecialTokenSplitter() = default;
  // Tokens with empty text are ignored.
  explicit SpecialTokenSplitter(std::vector<SpecialToken> tokens);

  // Returns text as fragments in order: at each position the longest matching token wins,
  // scanning left to right. The fragments' views point into text.
  std::vector<TextFragment> split(std::string_view text, bool parse_special) const;

  // Returns true when there is nothing to split on.
  bool empty() const { return tokens_.empty(); }

 private:
  std::vector<SpecialToken> tokens_;  // longest text first
  // Indexes into tokens_ by the first byte of their text, longest first.
  std::array<std::vector<uint32_t>, 256> by_first_byte_;
};

}  // namespace sluice
