// A non-streamed answer, built choice by choice. Each choice becomes JSON text the moment it
// finishes, and its tokens and log-probabilities (the bulk of a large answer) are dropped then;
// the text goes out piece by piece and is never copied into one string. (The server once built
// the whole answer as one JSON value: an 87 MB answer took 1.4 GB.)
#pragma once

#include <string>
#include <vector>

#include "app/server/completion_response.h"
#include "app/server/request_group.h"

namespace httplib {
struct Response;
}

namespace sluice {

class WholeResponse {
 public:
  // num_choices: prompts × n; bytes_of gives the tokens' text when logprobs are asked for.
  WholeResponse(ResponseHeader header, size_t num_choices, size_t num_prompts, bool wants_logprobs,
                TokenBytesFn bytes_of);

  // Takes an event of the request group: a finished choice is written out; tokens are ignored
  // (the finished event carries them all).
  void add(const ChoiceEvent& event);
  // The first error a choice ended with ("" when none).
  const std::string& error() const { return error_; }
  // True when a choice was aborted (the server is stopping).
  bool is_aborted() const { return is_aborted_; }
  // Sets res to the answer (200, application/json), sent piece by piece; keep_alive is held until
  // the response is gone (the request's ResponseBudget reservation). Leaves this empty.
  void send(httplib::Response& res, std::shared_ptr<void> keep_alive);

 private:
  ResponseHeader header_;
  bool wants_logprobs_;
  TokenBytesFn bytes_of_;
  std::vector<std::string> choice_texts_;  // [choices]
  Usage usage_;
  std::vector<bool> is_prompt_counted_;  // [prompts]
  std::string error_;
  bool is_aborted_ = false;
};

}  // namespace sluice
