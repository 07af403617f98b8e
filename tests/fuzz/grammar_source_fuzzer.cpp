// Feeds the grammar sources a user or an API client writes — a JSON Schema, a regular
// expression, a GBNF text, a list of choices — to build_grammar, then runs a matcher over a
// small vocabulary through the input's sample text. Properties: a refused source's error names
// it; an accepted grammar is within its budget (grammar_budget.h: at most kMaxGrammarSymbols
// symbols, a root closure the matcher can hold); at every step the cached token mask equals the
// mask found by stepping every token; a token is accepted exactly when the mask allows it; and
// the matcher ends complete exactly when the grammar accepts the sample as a whole.
//
// Input: byte 0 picks the kind, then the source text, a NUL, and the sample text.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/error.h"
#include "engine/grammar/compiled_grammar.h"
#include "engine/grammar/grammar_budget.h"
#include "engine/grammar/grammar_matcher.h"
#include "engine/grammar/grammar_source.h"
#include "tests/fuzz/fuzz_check.h"

using namespace sluice;

namespace {

constexpr std::string_view kSourceName = "fuzz-source";
constexpr size_t kMaxSampleBytes = 48;

// Ids 0-255 are the single bytes; then multi-byte pieces that cross JSON and UTF-8 boundaries;
// the last id is the stop token (no bytes).
std::shared_ptr<const TokenVocabulary> make_vocabulary() {
  std::vector<std::string> bytes;
  for (int b = 0; b < 256; ++b) bytes.emplace_back(1, static_cast<char>(b));
  for (const char* piece : {"{\"", "\":", "\",\"", "\"}", "true", "null", "ab", "abc", " \"", "12",
                            "\xC3\xA9", "\xC3", "\xA9x", "\\n", "[1"}) {
    bytes.emplace_back(piece);
  }
  bytes.emplace_back();
  const auto stop = static_cast<int32_t>(bytes.size() - 1);
  return std::make_shared<const TokenVocabulary>(std::move(bytes), std::vector<int32_t>{stop});
}

GrammarSource make_source(uint8_t selector, std::string_view text) {
  GrammarSource source;
  source.name = std::string(kSourceName);
  switch (selector % 4) {
    case 0:
      source.kind = GrammarSourceKind::JsonSchema;
      break;
    case 1:
      source.kind = GrammarSourceKind::Regex;
      break;
    case 2:
      source.kind = GrammarSourceKind::Gbnf;
      break;
    default: {
      source.kind = GrammarSourceKind::Choice;
      size_t begin = 0;
      while (begin <= text.size()) {
        const size_t end = std::min(text.find('\n', begin), text.size());
        source.choices.emplace_back(text.substr(begin, end - begin));
        begin = end + 1;
      }
      return source;
    }
  }
  source.text = std::string(text);
  return source;
}

bool is_set(const std::vector<uint32_t>& mask, int32_t id) {
  return test_token_bit(std::span<const uint32_t>(mask), id);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
  const size_t split = std::min(input.find('\0'), input.size());
  const GrammarSource source = make_source(data[0], input.substr(0, split));
  std::string_view sample = split < input.size() ? input.substr(split + 1) : std::string_view{};
  sample = sample.substr(0, kMaxSampleBytes);

  Grammar grammar;
  try {
    grammar = build_grammar(source);
  } catch (const Error& error) {
    fuzz::require_names_file(error, kSourceName);
    return 0;
  }
  fuzz::fuzz_require(grammar.num_positions() <= kMaxGrammarSymbols,
                     "an accepted grammar has " + std::to_string(grammar.num_positions()) +
                         " symbols, past kMaxGrammarSymbols");
  static const std::shared_ptr<const TokenVocabulary> vocabulary = make_vocabulary();
  auto compiled = std::make_shared<const CompiledGrammar>(grammar, vocabulary);
  std::unique_ptr<GrammarMatcher> started;
  try {
    started = std::make_unique<GrammarMatcher>(compiled);
  } catch (const Error& error) {
    // Only nesting past the matcher's depth may stop a compiled grammar's root from starting:
    // its closure was checked against the matcher's bounds when it compiled.
    fuzz::fuzz_require(std::string(error.what()).find("nests deeper") != std::string::npos,
                       std::string("an accepted grammar's root does not start: ") + error.what());
    return 0;
  }
  GrammarMatcher& matcher = *started;
  const bool accepts_whole = grammar_accepts_text(grammar, sample);
  std::vector<uint32_t> cached(vocabulary->num_mask_words());
  std::vector<uint32_t> walked(vocabulary->num_mask_words());
  bool is_rejected = false;
  for (size_t i = 0; i <= sample.size(); ++i) {
    std::fill(cached.begin(), cached.end(), 0u);
    std::fill(walked.begin(), walked.end(), 0u);
    matcher.fill_next_token_mask(cached);
    matcher.fill_next_token_mask_by_walk(walked);
    fuzz::fuzz_require(
        cached == walked,
        "the cached token mask differs from the walked one at byte " + std::to_string(i));
    if (i == sample.size()) break;
    const auto id = static_cast<int32_t>(static_cast<uint8_t>(sample[i]));
    const bool allowed = is_set(cached, id);
    const bool accepted = matcher.accept_token(id);
    fuzz::fuzz_require(accepted == allowed, "byte " + std::to_string(i) + ": the mask says " +
                                                (allowed ? "allowed" : "refused") +
                                                " but accept_token says the opposite");
    if (!accepted) {
      is_rejected = true;
      break;
    }
  }
  if (!is_rejected) {
    fuzz::fuzz_require(matcher.is_complete() == accepts_whole,
                       "the matcher and grammar_accepts_text disagree on the whole sample");
  } else {
    fuzz::fuzz_require(!accepts_whole, "grammar_accepts_text accepts a sample the matcher refused");
  }
  return 0;
}
