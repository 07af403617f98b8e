#include "app/server/stream_response.h"

#include <httplib.h>

#include <algorithm>

#include "app/server/api_error.h"

namespace sluice {

namespace {

using namespace std::chrono_literals;

// The state of one streamed response, kept alive by the content provider.
struct StreamState {
  std::unique_ptr<RequestGroup> group;
  ResponseHeader header;
  StreamOptions options;
  std::shared_ptr<void> keep_alive;
  std::vector<bool> has_sent;  // [choices]: the first chunk (with a chat's role) went out
  Usage usage;
  std::vector<bool> is_prompt_counted;  // [prompts]
  // Log-probabilities asked for: each choice's tokens not yet sent (a token that ends inside a
  // UTF-8 character has no text of its own and goes with the next chunk), and its bytes so far.
  std::vector<std::vector<int32_t>> pending_ids;             // [choices]
  std::vector<std::vector<TokenLogprobs>> pending_logprobs;  // [choices]
  std::vector<size_t> num_bytes_sent;                        // [choices]

  // Returns the logprobs of choice's pending tokens for its next chunk (null when not asked or
  // none are pending).
  nlohmann::json take_logprobs(size_t choice) {
    if (!options.wants_logprobs || pending_ids[choice].empty()) return nullptr;
    nlohmann::json out = logprobs_json(header.kind, pending_ids[choice], pending_logprobs[choice],
                                       options.bytes_of, num_bytes_sent[choice]);
    for (const int32_t id : pending_ids[choice])
      num_bytes_sent[choice] += options.bytes_of(id).size();
    pending_ids[choice].clear();
    pending_logprobs[choice].clear();
    return out;
  }

  // Returns the events of one token of a choice: a chunk of its reasoning and one of its answer,
  // each only when the token decided text of that kind ("" when it has none of its own yet).
  std::string on_token(const ChoiceEvent& e) {
    const size_t choice = static_cast<size_t>(e.choice_index);
    const TokenDelta& token = e.event.token;
    if (options.wants_logprobs && token.logprobs && token.token_id >= 0) {
      pending_ids[choice].push_back(token.token_id);
      pending_logprobs[choice].push_back(*token.logprobs);
    }
    std::string out;
    // (Only chat requests are given a reasoning format: a text completion's text is the whole
    // output.)
    if (!token.reasoning_text.empty()) {
      const bool is_first = !has_sent[choice];
      has_sent[choice] = true;
      out += sse_event(reasoning_chunk_json(header, e.choice_index, token.reasoning_text, is_first,
                                            options.include_usage, take_logprobs(choice)));
    }
    if (!token.text.empty()) {
      const bool is_first = !has_sent[choice];
      has_sent[choice] = true;
      out += sse_event(chunk_json(header, e.choice_index, token.text, is_first, FinishReason::None,
                                  options.include_usage, take_logprobs(choice)));
    }
    return out;
  }

  // Returns the events that end a choice: its error, if any, and its finish reason.
  std::string on_finished(const ChoiceEvent& e) {
    const size_t choice = static_cast<size_t>(e.choice_index);
    const FinishedRequest& f = e.event.finished;
    usage.completion_tokens += static_cast<int64_t>(f.output_token_ids.size());
    usage.reasoning_tokens += std::max(f.num_reasoning_tokens, 0);
    if (!is_prompt_counted[e.prompt_idx]) {
      is_prompt_counted[e.prompt_idx] = true;
      usage.prompt_tokens += f.num_prompt_tokens;
    }
    std::string out;
    if (f.finish_reason == FinishReason::Error)
      out += sse_event(error_json(bad_request("", f.error)));
    const bool is_first = !has_sent[choice];
    has_sent[choice] = true;
    out += sse_event(chunk_json(header, e.choice_index, "", is_first, f.finish_reason,
                                options.include_usage, take_logprobs(choice)));
    return out;
  }

  // Writes what arrived (waiting a moment for it); false when a write failed.
  bool provide(httplib::DataSink& sink) {
    std::string out;
    for (auto& e : group->wait(200ms)) out += e.event.is_finished ? on_finished(e) : on_token(e);
    if (!out.empty() && !sink.write(out.data(), out.size())) return false;
    if (!group->is_done()) return true;
    std::string tail;
    if (options.include_usage) tail += sse_event(usage_chunk_json(header, usage));
    tail += kSseDone;
    if (!sink.write(tail.data(), tail.size())) return false;
    sink.done();
    return true;
  }
};

}  // namespace

void send_stream(httplib::Response& res, std::unique_ptr<RequestGroup> group, ResponseHeader header,
                 StreamOptions options, std::shared_ptr<void> keep_alive) {
  auto state = std::make_shared<StreamState>();
  state->group = std::move(group);
  state->header = std::move(header);
  state->has_sent.assign(options.num_choices, false);
  state->is_prompt_counted.assign(options.num_prompts, false);
  state->pending_ids.resize(options.num_choices);
  state->pending_logprobs.resize(options.num_choices);
  state->num_bytes_sent.assign(options.num_choices, 0);
  state->options = std::move(options);
  state->keep_alive = std::move(keep_alive);
  res.set_header("Cache-Control", "no-cache");
  res.set_chunked_content_provider("text/event-stream", [state](size_t, httplib::DataSink& sink) {
    return state->provide(sink);
  });
}

}  // namespace sluice
