// Feeds chat template source to the Jinja parser: statements, nesting of blocks, expressions
// with their precedence, macros, filters and tests, and every syntax error on the way.
#include <cstddef>
#include <cstdint>
#include <string>

#include "engine/core/error.h"
#include "engine/template/template_lexer.h"
#include "engine/template/template_parser.h"

using namespace sluice;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    (void)jinja::parse_template(
        jinja::normalize_template_source({reinterpret_cast<const char*>(data), size}));
  } catch (const Error&) {
  }
  return 0;
}
