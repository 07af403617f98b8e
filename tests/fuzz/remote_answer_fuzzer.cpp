// Feeds what a remote OpenAI-compatible server may answer a remote job with (its body and its
// Retry-After header) to the remote driver's parsing: a completion or chat completion answer,
// an error body, the header. Properties: an answer is parsed into a finished sample (stop or
// length, token counts -1 or more) or refused with a sluice::Error that says why; an error
// message is valid UTF-8 and short; a Retry-After is never negative; an accepted answer's text
// was a string (a null one, sent beside a refusal or tool calls, is refused).
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "app/remote/remote_protocol.h"
#include "engine/core/error.h"
#include "tests/fuzz/fuzz_check.h"

using namespace sluice;

namespace {

void parse_as(std::string_view body, bool is_chat) {
  FinishedRequest f;
  try {
    f = parse_remote_response(body, is_chat);
  } catch (const Error& error) {
    fuzz::fuzz_require(std::string_view(error.what()).size() > 0, "a refusal without a message");
    return;
  }
  fuzz::fuzz_require(
      f.finish_reason == FinishReason::Stop || f.finish_reason == FinishReason::Length,
      "an answer finished with neither stop nor length");
  fuzz::fuzz_require(f.num_output_tokens >= -1 && f.num_prompt_tokens >= 0,
                     "a negative token count");
  // An accepted answer had text: a null one (a refusal, tool calls) is no row's output.
  const auto answer = nlohmann::json::parse(body, nullptr, false);
  const auto& choice = answer.at("choices").at(0);
  const auto& text = is_chat ? choice.at("message").at("content") : choice.at("text");
  fuzz::fuzz_require(text.is_string(), "an answer without text was accepted");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  parse_as(text, true);
  parse_as(text, false);
  const std::string message = remote_error_message(text);
  fuzz::fuzz_require(message.size() <= 320 || text.find("\"error\"") != std::string_view::npos ||
                         text.find("\"message\"") != std::string_view::npos,
                     "a non-JSON error body was not cut short");
  try {
    (void)nlohmann::json(message).dump();  // throws on invalid UTF-8
  } catch (const nlohmann::json::exception&) {
    fuzz::fuzz_require(false, "an error message with invalid UTF-8");
  }
  const auto now = std::chrono::system_clock::from_time_t(1790000000);
  if (const auto delay = parse_retry_after(text.substr(0, 64), now))
    fuzz::fuzz_require(*delay >= 0, "a negative Retry-After");
  return 0;
}
