// llama2.c's tokenizer.bin: int32 max_token_length, then per token a float32 score, an int32
// byte length and the bytes. SentencePiece's "▁" is stored as a plain space, BOS and EOS as
// "\n<s>\n" and "\n</s>\n". Encoding and decoding follow llama2.c's run.c (encode/decode), so
// ids match what run.c feeds the model; run.c's O(n^2) merge loop is replaced by the
// equivalent heap in symbol_merger.h.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/tokenizer/special_token_splitter.h"
#include "engine/tokenizer/tokenizer.h"

namespace sluice {

class Llama2cTokenizer final : public Tokenizer {
 public:
  // Reads a tokenizer.bin. expected_vocab_size < 0 counts the tokens in the file; otherwise the
  // file must hold exactly that many. Throws Error naming the file (and the token index for
  // truncated or corrupt records).
  static std::unique_ptr<Llama2cTokenizer> load(const std::string& path,
                                                int32_t expected_vocab_size = -1);
  // Parses tokenizer.bin bytes; path only names the source in errors.
  static std::unique_ptr<Llama2cTokenizer> parse(std::span<const uint8_t> bytes,
                                                 const std::string& path,
                                                 int32_t expected_vocab_size = -1);
  // Returns true when bytes plausibly start a tokenizer.bin (a small positive max_token_length
  // and three well-framed records), for detecting the format by content.
  static bool looks_like_llama2c_tokenizer(std::span<const uint8_t> bytes);

  std::vector<int32_t> encode(std::string_view text, const EncodeOptions& options) const override;
  std::string token_to_bytes(int32_t id, bool at_sequence_start) const override;
  std::string token_text(int32_t id) const override;
  TokenKind token_kind(int32_t id) const override;
  int32_t vocab_size() const override { return static_cast<int32_t>(pieces_.size()); }
  int32_t bos_id() const override { return kBosId; }
  int32_t eos_id() const override { return kEosId; }
  bool add_bos_default() const override { return true; }  // run.c always prepends BOS
  std::string describe() const override;
  // Every piece is at most max_token_length bytes of text (special texts such as "<unk>" are
  // shorter than any real header's limit, and counted too), and unknown bytes become <unk>.
  size_t min_num_tokens(std::string_view text) const override {
    return min_tokens_covering(text.size(), std::max<size_t>(max_token_length_, 5));
  }

  // Returns the merge score of a piece. Precondition: 0 <= id < vocab_size() (throws otherwise).
  float score(int32_t id) const { return scores_.at(id); }
  // Returns the header's longest piece length in bytes.
  int32_t max_token_length() const { return max_token_length_; }

 private:
  static constexpr int32_t kUnkId = 0;
  static constexpr int32_t kBosId = 1;
  static constexpr int32_t kEosId = 2;

  Llama2cTokenizer(std::vector<std::string> pieces, std::vector<float> scores,
                   int32_t max_token_length);
  // Appends the ids of raw text (no special tokens), run.c's algorithm.
  void encode_text(std::string_view text, std::vector<int32_t>& ids) const;
  int32_t find_piece(const std::string& piece) const;

  std::vector<std::string> pieces_;
  std::vector<float> scores_;
  int32_t max_token_length_ = 0;
  std::unordered_map<std::string, int32_t> piece_ids_;
  std::array<int32_t, 256> byte_ids_{};  // byte-fallback piece <0xNN> of each byte
  std::vector<bool> is_byte_piece_;
  SpecialTokenSplitter special_tokens_;
};

}  // namespace sluice
