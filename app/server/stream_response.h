// A streamed answer: server-sent events, written as the engine's tokens arrive, one chunk per
// choice's new text (with its tokens' log-probabilities when asked for), then each choice's
// finish reason, the usage chunk when asked for, and [DONE].
#pragma once

#include <memory>

#include "app/server/completion_response.h"
#include "app/server/request_group.h"

namespace httplib {
struct Response;
}

namespace sluice {

struct StreamOptions {
  size_t num_choices = 0;  // prompts × n
  size_t num_prompts = 0;
  bool include_usage = false;  // stream_options.include_usage
  bool wants_logprobs = false;
  TokenBytesFn bytes_of;  // the tokens' text, for log-probabilities
};

// Sets res to stream group's events. A write that fails (the client went away, or read nothing
// for the write timeout) ends the response, and dropping the group then aborts its requests.
// keep_alive is held until the stream is gone (the request's ResponseBudget reservation).
void send_stream(httplib::Response& res, std::unique_ptr<RequestGroup> group, ResponseHeader header,
                 StreamOptions options, std::shared_ptr<void> keep_alive);

}  // namespace sluice
