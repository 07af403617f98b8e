// Helpers for the grammar tests: whether a grammar accepts a text as a whole.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "engine/core/error.h"
#include "engine/grammar/compiled_grammar.h"
#include "engine/grammar/grammar_matcher.h"

namespace sluice::test {

// A vocabulary of the 256 single bytes plus an EOS (id 256).
inline std::shared_ptr<const TokenVocabulary> byte_vocabulary() {
  std::vector<std::string> bytes;
  for (int b = 0; b < 256; ++b) bytes.emplace_back(1, static_cast<char>(b));
  bytes.emplace_back();
  return std::make_shared<TokenVocabulary>(std::move(bytes), std::vector<int32_t>{256});
}

// Whether grammar accepts exactly text (all of it, and the grammar is complete after it).
inline bool grammar_accepts(const Grammar& grammar, std::string_view text) {
  return grammar_accepts_text(grammar, text);
}

// Returns the message of the sluice::Error that fn throws, or "" when it throws none.
template <typename Fn>
std::string error_message(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace sluice::test
