// Pre-tokenizers of byte-level BPE vocabularies: they cut text into words before BPE merges
// run inside each word. Each pattern is hand-coded from its regex (no regex engine), following
// the regex's alternation order and backtracking exactly:
//   Gpt2:   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//   Gpt2IsolatedDigits: every \p{N} character is a word of its own, the rest split as Gpt2
//           (StarCoder, SmolLM, Refact, Command-R: llama.cpp's "\p{N}" split before GPT-2's)
//   Llama3: (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
//           ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//   Qwen2:  as Llama3 with \p{N} (one digit per word) instead of \p{N}{1,3}
// Ill-formed UTF-8 bytes count as characters of no class (like punctuation), so every byte of
// the input lands in exactly one word.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

namespace sluice {

enum class PreTokenizer {
  Gpt2,
  Gpt2IsolatedDigits,
  Llama3,
  Qwen2,
};

// Returns text cut into words, in order; the words' views point into text and concatenate back
// to it.
std::vector<std::string_view> pre_tokenize(std::string_view text, PreTokenizer kind);

// Returns the pre-tokenizer for a GGUF tokenizer.ggml.pre value (llama.cpp's names), or nullopt
// for one Sluice does not implement.
std::optional<PreTokenizer> pre_tokenizer_from_gguf_name(std::string_view name);

// Returns a short name for describe(): "gpt2", "gpt2-digits", "llama3", "qwen2".
std::string_view pre_tokenizer_name(PreTokenizer kind);

}  // namespace sluice
