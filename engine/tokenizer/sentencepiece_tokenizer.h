// A SentencePiece .model file, encoded and decoded by libsentencepiece itself (the reference
// implementation), plus what a Hugging Face tokenizer_config.json adds on top: the add_bos /
// add_eos rule, BOS/EOS overrides and added tokens past the model's pieces. libsentencepiece
// stays behind a pointer so that including this header does not need its headers.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/tokenizer/added_token.h"
#include "engine/tokenizer/special_token_splitter.h"
#include "engine/tokenizer/tokenizer.h"

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace sluice {

struct SentencePieceOptions {
  bool add_bos = true;  // Llama-family models expect BOS; tokenizer_config may say otherwise
  bool add_eos = false;
  // Override the model's BOS/EOS by piece or added-token text (tokenizer_config bos_token,
  // eos_token); an empty string means the model has none.
  std::optional<std::string> bos_token;
  std::optional<std::string> eos_token;
  std::vector<AddedToken> added_tokens;  // ids past the model's pieces extend the vocabulary
  std::vector<int32_t> extra_stop_ids;
};

class SentencePieceTokenizer final : public Tokenizer {
 public:
  // Loads a .model file. Throws Error naming the file when it is missing or not a valid model,
  // when an added token id is negative, or when bos_token/eos_token name no piece.
  static std::unique_ptr<SentencePieceTokenizer> load(const std::string& path,
                                                      SentencePieceOptions options = {});
  // Returns true when bytes start as a protobuf whose first field is a SentencePiece piece, the
  // layout of every .model file, for detecting the format by content (load() checks the rest).
  static bool looks_like_sentencepiece_model(std::span<const uint8_t> bytes);

  ~SentencePieceTokenizer() override;

  std::vector<int32_t> encode(std::string_view text, const EncodeOptions& options) const override;
  std::string token_to_bytes(int32_t id, bool at_sequence_start) const override;
  std::string token_text(int32_t id) const override;
  TokenKind token_kind(int32_t id) const override;
  int32_t vocab_size() const override { return vocab_size_; }
  int32_t bos_id() const override { return bos_id_; }
  int32_t eos_id() const override { return eos_id_; }
  bool add_bos_default() const override { return add_bos_; }
  std::vector<int32_t> extra_stop_ids() const override { return extra_stop_ids_; }
  std::string describe() const override;
  size_t min_num_tokens(std::string_view text) const override;

  // Returns the id of a piece of the model or an added token, or -1.
  int32_t piece_to_id(const std::string& piece) const;
  // Returns the number of pieces in the .model file itself (without added tokens).
  int32_t num_model_pieces() const { return num_model_pieces_; }

 private:
  SentencePieceTokenizer() = default;
  void init(const std::string& path, SentencePieceOptions options);
  const AddedToken* find_added(int32_t id) const;
  // Returns the id of a bos_token/eos_token override; -1 for ""; throws when it names nothing.
  int32_t resolve_token(const std::string& text, const char* what) const;

  std::unique_ptr<sentencepiece::SentencePieceProcessor> processor_;
  std::string path_;
  int32_t num_model_pieces_ = 0;
  int32_t vocab_size_ = 0;
  int32_t bos_id_ = -1;
  int32_t eos_id_ = -1;
  bool add_bos_ = true;
  bool add_eos_ = false;
  // Whether decoding drops the space SentencePiece put before the first word (the model's
  // normalizer add_dummy_prefix or remove_extra_whitespaces, as libsentencepiece decides).
  bool strips_leading_space_ = true;
  std::vector<AddedToken> added_tokens_;  // sorted by id
  std::vector<int32_t> extra_stop_ids_;
  SpecialTokenSplitter special_tokens_;
  // For min_num_tokens: the most input bytes one token stands for (0: no bound, the model's
  // normalizer rewrites text or unknown characters have no byte fallback), and whether the
  // normalizer collapses runs of spaces (then only other bytes are sure to be kept).
  size_t max_token_bytes_ = 0;
  bool removes_extra_spaces_ = true;
};

}  // namespace sluice
