// Feeds chat template source to the Jinja lexer: newline normalization, text and tag splitting,
// whitespace control, comments, raw blocks, string and number literals.
#include <cstddef>
#include <cstdint>
#include <string>

#include "engine/core/error.h"
#include "engine/template/template_lexer.h"
#include "tests/fuzz/fuzz_check.h"

using namespace sluice;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string source =
      jinja::normalize_template_source({reinterpret_cast<const char*>(data), size});
  std::vector<jinja::Token> tokens;
  try {
    tokens = jinja::tokenize_template(source);
  } catch (const Error&) {
    return 0;
  }
  fuzz::fuzz_require(!tokens.empty() && tokens.back().kind == jinja::TokenKind::End,
                     "the token list does not end with End");
  uint32_t previous_offset = 0;
  for (const jinja::Token& token : tokens) {
    fuzz::fuzz_require(token.offset >= previous_offset && token.offset <= source.size(),
                       str_cat("token offset ", token.offset, " after ", previous_offset,
                               " in a source of ", source.size(), " bytes"));
    previous_offset = token.offset;
  }
  return 0;
}
