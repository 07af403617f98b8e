// Feeds model output to the reasoning parser (engine/reasoning/reasoning_parser.h): its first
// byte picks the format and whether the prompt opened a block, its second how the stream is cut;
// the rest is the output. Split whole and streamed in chunks, the two must agree (the parser's
// promise: deltas concatenate to the whole split however the output was cut), and the split can
// add at most a separator byte per message to the output's bytes.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "engine/core/error.h"
#include "engine/reasoning/reasoning_parser.h"
#include "tests/fuzz/fuzz_check.h"

using namespace sluice;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const ReasoningFormat formats[] = {ReasoningFormat::None, ReasoningFormat::ThinkTags,
                                     ReasoningFormat::ThoughtChannel, ReasoningFormat::Harmony};
  const ReasoningFormat format = formats[data[0] % 4];
  const bool starts_in_reasoning = (data[0] & 4) != 0;
  const size_t chunk = 1 + data[1] % 17;
  const std::string_view output(reinterpret_cast<const char*>(data + 2), size - 2);

  const ReasoningSplit whole = split_reasoning(format, starts_in_reasoning, output);
  ReasoningStream stream(format, starts_in_reasoning);
  std::string reasoning, answer;
  for (size_t at = 0; at < output.size(); at += chunk) {
    const ReasoningSplit d = stream.feed(output.substr(at, chunk));
    reasoning += d.reasoning;
    answer += d.answer;
  }
  const ReasoningSplit last = stream.finish();
  reasoning += last.reasoning;
  answer += last.answer;
  fuzz::fuzz_require(reasoning == whole.reasoning,
                     str_cat("streamed reasoning (", reasoning.size(),
                             " bytes) differs from the "
                             "whole split's (",
                             whole.reasoning.size(), ") in chunks of ", chunk));
  fuzz::fuzz_require(answer == whole.answer,
                     str_cat("streamed answer (", answer.size(),
                             " bytes) differs from the whole "
                             "split's (",
                             whole.answer.size(), ") in chunks of ", chunk));
  fuzz::fuzz_require(whole.reasoning.size() + whole.answer.size() <= 2 * output.size(),
                     str_cat("a split of ", whole.reasoning.size() + whole.answer.size(),
                             " bytes from ", output.size(), " bytes of output"));
  return 0;
}
