// Feeds a request body, as any client of `sluice serve` may send it, to the server's request
// parsing: the body (UTF-8, depth, an object), then the completion and the chat completion
// checks, then the grammar it asks for. Properties: every refusal is an ApiError with a 4xx
// status and a message; a grammar refused by build_grammar names its parameter.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "app/server/api_error.h"
#include "app/server/completion_request.h"
#include "engine/core/error.h"
#include "engine/grammar/grammar_source.h"
#include "tests/fuzz/fuzz_check.h"

using namespace sluice;

namespace {

void check_refusal(const ApiError& error) {
  fuzz::fuzz_require(error.status() >= 400 && error.status() < 500,
                     "a refused request gets status " + std::to_string(error.status()));
  fuzz::fuzz_require(std::string_view(error.what()).size() > 0, "a refusal without a message");
}

void parse_as(const nlohmann::json& body, CompletionKind kind) {
  CompletionRequest request;
  try {
    request = parse_completion_request(body, kind, SamplingParams{});
  } catch (const ApiError& error) {
    check_refusal(error);
    return;
  }
  fuzz::fuzz_require(request.sampling.n >= 1 && request.sampling.n <= kMaxChoices,
                     "n out of range after the checks");
  if (!request.grammar) return;
  fuzz::fuzz_require(!request.grammar_param.empty(), "a grammar without its parameter's name");
  try {
    (void)build_grammar(*request.grammar);
  } catch (const Error& error) {
    fuzz::require_names_file(error, request.grammar->name);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  nlohmann::json body;
  try {
    body = parse_request_body(text);
  } catch (const ApiError& error) {
    check_refusal(error);
    return 0;
  }
  fuzz::fuzz_require(body.is_object(), "parse_request_body returned a non-object");
  parse_as(body, CompletionKind::Text);
  parse_as(body, CompletionKind::Chat);
  return 0;
}
