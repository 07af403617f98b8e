#include "engine/model/synthetic_vocab.h"

#include <cstdio>

#include "engine/core/error.h"

namespace sluice {

namespace {

constexpr int kNumByteTokens = 256;
constexpr float kSpecialScore = -1000.0f;  // as llama.cpp's converter scores control tokens
constexpr int kFirstPrintable = '!', kLastPrintable = '~';

// The rank-th ordinary piece: "▁", then '!' ... '~', then "▁" + a, b, ..., z, aa, ab, ...
std::string piece_text(int64_t rank) {
  static const std::string kSpace = "\xe2\x96\x81";  // U+2581, SentencePiece's word start
  if (rank == 0) return kSpace;
  if (rank <= kLastPrintable - kFirstPrintable + 1)
    return std::string(1, static_cast<char>(kFirstPrintable + rank - 1));
  int64_t n = rank - (kLastPrintable - kFirstPrintable + 1);  // >= 1: bijective base 26
  std::string letters;
  while (n > 0) {
    --n;
    letters.insert(letters.begin(), static_cast<char>('a' + n % 26));
    n /= 26;
  }
  return kSpace + letters;
}

}  // namespace

SyntheticVocab make_synthetic_vocab(int vocab_size, int bos_id, int eos_id) {
  constexpr int kMinSize = 3 + kNumByteTokens;
  if (vocab_size < kMinSize) {
    fail("a synthetic SentencePiece vocabulary needs at least ", kMinSize,
         " tokens (3 special and 256 byte tokens); the model has ", vocab_size);
  }
  SyntheticVocab v;
  v.tokens.resize(static_cast<size_t>(vocab_size));
  v.scores.assign(static_cast<size_t>(vocab_size), 0.0f);
  v.token_types.assign(static_cast<size_t>(vocab_size), 0);
  const auto in_vocab = [&](int id) { return id >= 0 && id < vocab_size; };
  v.bos_id = in_vocab(bos_id) ? bos_id : 1;
  v.eos_id = in_vocab(eos_id) && eos_id != v.bos_id ? eos_id : (v.bos_id == 2 ? 1 : 2);
  const auto set = [&](int id, std::string text, TokenType type, float score) {
    v.tokens[static_cast<size_t>(id)] = std::move(text);
    v.token_types[static_cast<size_t>(id)] = static_cast<int32_t>(type);
    v.scores[static_cast<size_t>(id)] = score;
  };
  set(v.bos_id, "<s>", TokenType::Control, kSpecialScore);
  set(v.eos_id, "</s>", TokenType::Control, kSpecialScore);
  int next_free = 0;
  const auto take_free = [&] {
    while (next_free < vocab_size && v.token_types[static_cast<size_t>(next_free)] != 0)
      ++next_free;
    return next_free;
  };
  v.unk_id = take_free();
  set(v.unk_id, "<unk>", TokenType::Unknown, kSpecialScore);
  for (int b = 0; b < kNumByteTokens; ++b) {
    char text[8];
    std::snprintf(text, sizeof text, "<0x%02X>", b);
    set(take_free(), text, TokenType::Byte, 0.0f);
  }
  for (int64_t rank = 0; take_free() < vocab_size; ++rank)
    set(next_free, piece_text(rank), TokenType::Normal, -static_cast<float>(rank));
  return v;
}

}  // namespace sluice
