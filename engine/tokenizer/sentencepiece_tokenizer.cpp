#include "engine/tokenizer/sentencepiece_tokenizer.h"

#include <sentencepiece_processor.h>

#include <algorithm>
#include <filesystem>

#include "engine/core/error.h"
#include "engine/core/mapped_file.h"
#include "engine/tokenizer/byte_piece.h"

namespace sluice {

namespace {

constexpr std::string_view kSpaceSymbol = "\xE2\x96\x81";       // U+2581 "▁"
constexpr std::string_view kUnknownSurface = " \xE2\x81\x87 ";  // libsentencepiece's " ⁇ "

// Walks protobuf wire format (https://protobuf.dev/programming-guides/encoding/) just far
// enough to recognise a ModelProto and read two normalizer flags; libsentencepiece does the
// real parsing.
class ProtoFields {
 public:
  explicit ProtoFields(std::span<const uint8_t> bytes) : bytes_(bytes) {}

  struct Field {
    uint64_t number = 0;
    uint32_t wire_type = 0;
    uint64_t varint = 0;               // wire type 0
    std::span<const uint8_t> payload;  // wire type 2
  };

  // Reads the next field; returns false at the end or on malformed input (see is_malformed()).
  bool next(Field& field) {
    if (pos_ >= bytes_.size()) return false;
    uint64_t tag = 0;
    if (!read_varint(tag)) return malformed();
    field.number = tag >> 3;
    field.wire_type = static_cast<uint32_t>(tag & 7);
    if (field.number == 0) return malformed();
    switch (field.wire_type) {
      case 0:
        return read_varint(field.varint) || malformed();
      case 1:
        return skip(8);
      case 5:
        return skip(4);
      case 2: {
        uint64_t length = 0;
        if (!read_varint(length) || length > bytes_.size() - pos_) return malformed();
        field.payload = bytes_.subspan(pos_, length);
        pos_ += length;
        return true;
      }
      default:
        return malformed();  // groups (3, 4) never occur in sentencepiece models
    }
  }
  bool is_malformed() const { return is_malformed_; }
  size_t offset() const { return pos_; }

 private:
  bool read_varint(uint64_t& value) {
    value = 0;
    for (int shift = 0; shift < 64 && pos_ < bytes_.size(); shift += 7) {
      const uint8_t byte = bytes_[pos_++];
      value |= static_cast<uint64_t>(byte & 0x7F) << shift;
      if ((byte & 0x80) == 0) return true;
    }
    return false;
  }
  bool skip(size_t num_bytes) {
    if (num_bytes > bytes_.size() - pos_) return malformed();
    pos_ += num_bytes;
    return true;
  }
  bool malformed() {
    is_malformed_ = true;
    return false;
  }

  std::span<const uint8_t> bytes_;
  size_t pos_ = 0;
  bool is_malformed_ = false;
};

// ModelProto field numbers (sentencepiece_model.proto).
constexpr uint64_t kPiecesField = 1;
constexpr uint64_t kTrainerSpecField = 2;
constexpr uint64_t kNormalizerSpecField = 3;
constexpr uint64_t kPieceTextField = 1;
constexpr uint64_t kByteFallbackField = 35;  // in the trainer spec
constexpr uint64_t kPrecompiledCharsmapField = 2;
constexpr uint64_t kAddDummyPrefixField = 3;
constexpr uint64_t kRemoveExtraWhitespacesField = 4;

// Returns whether libsentencepiece's decoder drops the leading space of the first piece: it does
// when the normalizer adds a dummy prefix or removes extra whitespace (both default to true).
bool decoder_strips_leading_space(std::span<const uint8_t> model) {
  bool add_dummy_prefix = true;
  bool remove_extra_whitespaces = true;
  ProtoFields fields(model);
  ProtoFields::Field field;
  while (fields.next(field)) {
    if (field.number != kNormalizerSpecField || field.wire_type != 2) continue;
    ProtoFields spec(field.payload);
    ProtoFields::Field flag;
    while (spec.next(flag)) {
      if (flag.wire_type != 0) continue;
      if (flag.number == kAddDummyPrefixField) add_dummy_prefix = flag.varint != 0;
      if (flag.number == kRemoveExtraWhitespacesField) remove_extra_whitespaces = flag.varint != 0;
    }
  }
  return add_dummy_prefix || remove_extra_whitespaces;
}

// What min_num_tokens may rely on: every character kept or spelled in byte pieces.
struct TextKeeping {
  bool keeps_every_character = false;  // no character map and byte fallback for unknowns
  bool removes_extra_whitespaces = true;
};

TextKeeping text_keeping(std::span<const uint8_t> model) {
  TextKeeping keeping;
  bool has_charsmap = false, has_byte_fallback = false;
  ProtoFields fields(model);
  ProtoFields::Field field;
  while (fields.next(field)) {
    if (field.wire_type != 2) continue;
    if (field.number != kNormalizerSpecField && field.number != kTrainerSpecField) continue;
    ProtoFields spec(field.payload);
    ProtoFields::Field option;
    while (spec.next(option)) {
      if (field.number == kTrainerSpecField) {
        if (option.number == kByteFallbackField && option.wire_type == 0)
          has_byte_fallback = option.varint != 0;
      } else if (option.number == kPrecompiledCharsmapField && option.wire_type == 2) {
        has_charsmap = !option.payload.empty();
      } else if (option.number == kRemoveExtraWhitespacesField && option.wire_type == 0) {
        keeping.removes_extra_whitespaces = option.varint != 0;
      }
    }
  }
  keeping.keeps_every_character = !has_charsmap && has_byte_fallback;
  return keeping;
}

// Returns the index of the first piece whose text holds a NUL byte, or -1. libsentencepiece
// builds its trie from the pieces as C strings, where such a piece is cut short (an empty key
// ends the process inside the trie builder), so it is refused before the library sees it.
int64_t first_piece_with_nul(std::span<const uint8_t> model) {
  ProtoFields fields(model);
  ProtoFields::Field field;
  int64_t index = 0;
  while (fields.next(field)) {
    if (field.number != kPiecesField || field.wire_type != 2) continue;
    ProtoFields piece(field.payload);
    ProtoFields::Field text;
    while (piece.next(text)) {
      if (text.number != kPieceTextField || text.wire_type != 2) continue;
      if (std::find(text.payload.begin(), text.payload.end(), uint8_t{0}) != text.payload.end())
        return index;
    }
    ++index;
  }
  return -1;
}

}  // namespace

bool SentencePieceTokenizer::looks_like_sentencepiece_model(std::span<const uint8_t> bytes) {
  ProtoFields fields(bytes);
  ProtoFields::Field field;
  if (!fields.next(field) || field.number != kPiecesField || field.wire_type != 2) return false;
  ProtoFields piece(field.payload);
  ProtoFields::Field piece_field;
  if (!piece.next(piece_field) || piece_field.number != kPieceTextField ||
      piece_field.wire_type != 2) {
    return false;
  }
  return true;
}

std::unique_ptr<SentencePieceTokenizer> SentencePieceTokenizer::load(const std::string& path,
                                                                     SentencePieceOptions options) {
  std::unique_ptr<SentencePieceTokenizer> tokenizer(new SentencePieceTokenizer());
  tokenizer->init(path, std::move(options));
  return tokenizer;
}

SentencePieceTokenizer::~SentencePieceTokenizer() = default;

void SentencePieceTokenizer::init(const std::string& path, SentencePieceOptions options) {
  path_ = path;
  const auto file = MappedFile::open(path);
  const std::span<const uint8_t> bytes(file->data(), file->size());
  if (!looks_like_sentencepiece_model(bytes)) {
    fail(path, ": not a SentencePiece model (expected a protobuf ModelProto starting with pieces)");
  }
  ProtoFields fields(bytes);
  for (ProtoFields::Field field; fields.next(field);) continue;
  if (fields.is_malformed()) {
    fail(path,
         ": corrupt or truncated SentencePiece model: the protobuf framing breaks near offset ",
         fields.offset(), " of ", bytes.size());
  }
  if (const int64_t bad = first_piece_with_nul(bytes); bad >= 0) {
    fail(path, ": corrupt SentencePiece model: piece ", bad, " contains a NUL byte");
  }
  processor_ = std::make_unique<sentencepiece::SentencePieceProcessor>();
  const auto status = processor_->LoadFromSerializedProto(
      std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
  if (!status.ok()) fail(path, ": libsentencepiece cannot load the model: ", status.ToString());
  strips_leading_space_ = decoder_strips_leading_space(bytes);

  num_model_pieces_ = processor_->GetPieceSize();
  vocab_size_ = num_model_pieces_;
  bos_id_ = processor_->bos_id();
  eos_id_ = processor_->eos_id();
  add_bos_ = options.add_bos;
  add_eos_ = options.add_eos;
  extra_stop_ids_ = std::move(options.extra_stop_ids);
  added_tokens_ = std::move(options.added_tokens);
  std::sort(added_tokens_.begin(), added_tokens_.end(),
            [](const AddedToken& a, const AddedToken& b) { return a.id < b.id; });

  // Added tokens extend the vocabulary past the model's pieces, densely (a few may repeat a
  // piece's id), so an id at or past pieces + added tokens is damage, not a real token.
  const int64_t max_added_id =
      int64_t{num_model_pieces_} + static_cast<int64_t>(added_tokens_.size());
  std::vector<SpecialToken> specials;
  for (const AddedToken& added : added_tokens_) {
    if (added.id < 0) fail(path, ": added token '", added.content, "' has a negative id");
    if (added.id >= max_added_id) {
      fail(path, ": added token '", added.content,
           "' (tokenizer_config.json added_tokens_decoder) has id ", added.id,
           " but the model has ", num_model_pieces_, " pieces and ", added_tokens_.size(),
           " added tokens, so ids must lie below ", max_added_id);
    }
    vocab_size_ = std::max(vocab_size_, added.id + 1);
    // libsentencepiece already keeps its own user-defined pieces whole; only tokens it does
    // not know, or special ones, need splitting out before it runs.
    if (added.is_special || added.id >= num_model_pieces_) {
      specials.push_back({added.content, added.id, !added.is_special});
    }
  }
  for (int32_t id = 0; id < num_model_pieces_; ++id) {
    if (processor_->IsControl(id) || processor_->IsUnknown(id)) {
      specials.push_back({processor_->IdToPiece(id), id, false});
    }
  }
  special_tokens_ = SpecialTokenSplitter(std::move(specials));
  const TextKeeping keeping = text_keeping(bytes);
  removes_extra_spaces_ = keeping.removes_extra_whitespaces;
  if (keeping.keeps_every_character) {
    // A piece's text is at least as long as what it stands for ("▁" is 3 bytes for a space).
    for (int32_t id = 0; id < num_model_pieces_; ++id)
      max_token_bytes_ = std::max(max_token_bytes_, processor_->IdToPiece(id).size());
    for (const AddedToken& added : added_tokens_)
      max_token_bytes_ = std::max(max_token_bytes_, added.content.size());
  }
  if (options.bos_token) bos_id_ = resolve_token(*options.bos_token, "bos_token");
  if (options.eos_token) eos_id_ = resolve_token(*options.eos_token, "eos_token");
  std::erase(extra_stop_ids_, eos_id_);  // generation_config lists EOS among its eos ids
}

int32_t SentencePieceTokenizer::resolve_token(const std::string& text, const char* what) const {
  if (text.empty()) return -1;
  const int32_t id = piece_to_id(text);
  if (id < 0) fail(path_, ": ", what, " '", text, "' is neither a piece nor an added token");
  return id;
}

const AddedToken* SentencePieceTokenizer::find_added(int32_t id) const {
  const auto it = std::lower_bound(added_tokens_.begin(), added_tokens_.end(), id,
                                   [](const AddedToken& a, int32_t value) { return a.id < value; });
  return it != added_tokens_.end() && it->id == id ? &*it : nullptr;
}

int32_t SentencePieceTokenizer::piece_to_id(const std::string& piece) const {
  for (const AddedToken& added : added_tokens_) {
    if (added.content == piece) return added.id;
  }
  const int id = processor_->PieceToId(piece);
  // PieceToId answers unk_id for pieces it does not know.
  if (id < 0 || (processor_->IsUnknown(id) && processor_->IdToPiece(id) != piece)) return -1;
  return id;
}

std::vector<int32_t> SentencePieceTokenizer::encode(std::string_view text,
                                                    const EncodeOptions& options) const {
  std::vector<int32_t> ids;
  if (options.add_bos && bos_id_ >= 0) ids.push_back(bos_id_);
  std::vector<int> piece_ids;
  for (const TextFragment& fragment : special_tokens_.split(text, options.parse_special)) {
    if (fragment.is_token()) {
      ids.push_back(fragment.token_id);
      continue;
    }
    const auto status = processor_->Encode(fragment.text, &piece_ids);
    if (!status.ok()) fail(path_, ": libsentencepiece failed to encode: ", status.ToString());
    ids.insert(ids.end(), piece_ids.begin(), piece_ids.end());
  }
  if (options.add_eos && eos_id_ >= 0) ids.push_back(eos_id_);
  return ids;
}

std::string SentencePieceTokenizer::token_to_bytes(int32_t id, bool at_sequence_start) const {
  if (id < 0 || id >= vocab_size_) return "";
  if (id >= num_model_pieces_) {
    const AddedToken* added = find_added(id);
    return added == nullptr || added->is_special ? "" : added->content;
  }
  if (processor_->IsControl(id) || processor_->IsUnused(id)) return "";
  if (processor_->IsUnknown(id)) return std::string(kUnknownSurface);
  const std::string& piece = processor_->IdToPiece(id);
  if (processor_->IsByte(id)) {
    const auto byte = parse_byte_piece(piece);
    return byte ? std::string(1, static_cast<char>(*byte)) : "";
  }
  std::string out;
  std::string_view rest = piece;
  if (at_sequence_start && strips_leading_space_ && rest.starts_with(kSpaceSymbol)) {
    rest.remove_prefix(kSpaceSymbol.size());
  }
  for (size_t found; (found = rest.find(kSpaceSymbol)) != std::string_view::npos;) {
    out.append(rest.substr(0, found)).push_back(' ');
    rest.remove_prefix(found + kSpaceSymbol.size());
  }
  out.append(rest);
  return out;
}

std::string SentencePieceTokenizer::token_text(int32_t id) const {
  if (id < 0 || id >= vocab_size_) return "";
  if (id < num_model_pieces_) return processor_->IdToPiece(id);
  const AddedToken* added = find_added(id);
  return added == nullptr ? "" : added->content;
}

TokenKind SentencePieceTokenizer::token_kind(int32_t id) const {
  if (id < 0 || id >= vocab_size_) return TokenKind::Unused;
  if (id >= num_model_pieces_) {
    const AddedToken* added = find_added(id);
    if (added == nullptr) return TokenKind::Unused;
    return added->is_special ? TokenKind::Control : TokenKind::UserDefined;
  }
  if (processor_->IsControl(id)) return TokenKind::Control;
  if (processor_->IsUnknown(id)) return TokenKind::Unknown;
  if (processor_->IsUnused(id)) return TokenKind::Unused;
  if (processor_->IsByte(id)) return TokenKind::Byte;
  return TokenKind::Normal;
}

size_t SentencePieceTokenizer::min_num_tokens(std::string_view text) const {
  if (max_token_bytes_ == 0) return 0;
  // Collapsed runs of spaces keep one space each; every other byte survives normalization.
  const size_t num_kept = removes_extra_spaces_
                              ? static_cast<size_t>(std::count_if(text.begin(), text.end(),
                                                                  [](char c) { return c != ' '; }))
                              : text.size();
  return min_tokens_covering(num_kept, max_token_bytes_);
}

std::string SentencePieceTokenizer::describe() const {
  std::string out = str_cat("sentencepiece ", std::filesystem::path(path_).filename().string(),
                            " (", num_model_pieces_, " pieces");
  if (vocab_size_ > num_model_pieces_) out += str_cat(", vocabulary ", vocab_size_);
  return out + ")";
}

}  // namespace sluice
