#include "app/server/whole_response.h"

#include <httplib.h>

#include <algorithm>

namespace sluice {

namespace {

// The pieces of a body and where each starts, for a content provider asked for any offset.
struct BodyPieces {
  std::vector<std::string> pieces;
  std::vector<size_t> offsets;  // [pieces + 1]: offsets[i] is where pieces[i] starts

  explicit BodyPieces(std::vector<std::string> all) : pieces(std::move(all)) {
    offsets.push_back(0);
    for (const auto& piece : pieces) offsets.push_back(offsets.back() + piece.size());
  }
  size_t size() const { return offsets.back(); }

  // Writes what starts at offset, up to length bytes and the end of its piece.
  bool write(size_t offset, size_t length, httplib::DataSink& sink) const {
    const size_t i = static_cast<size_t>(std::upper_bound(offsets.begin(), offsets.end(), offset) -
                                         offsets.begin() - 1);
    if (i >= pieces.size()) return false;
    const size_t start = offset - offsets[i];
    const size_t count = std::min(length, pieces[i].size() - start);
    return sink.write(pieces[i].data() + start, count);
  }
};

}  // namespace

WholeResponse::WholeResponse(ResponseHeader header, size_t num_choices, size_t num_prompts,
                             bool wants_logprobs, TokenBytesFn bytes_of)
    : header_(std::move(header)),
      wants_logprobs_(wants_logprobs),
      bytes_of_(std::move(bytes_of)),
      choice_texts_(num_choices),
      is_prompt_counted_(num_prompts, false) {}

void WholeResponse::add(const ChoiceEvent& e) {
  if (!e.event.is_finished) return;
  const FinishedRequest& f = e.event.finished;
  // (A text completion's request has no reasoning format: its output_text is the whole output.)
  Choice choice{e.choice_index, f.output_text, f.finish_reason, nullptr, f.reasoning_text};
  if (wants_logprobs_) {
    choice.logprobs = logprobs_json(header_.kind, f.output_token_ids, f.output_logprobs, bytes_of_);
  }
  choice_texts_[static_cast<size_t>(e.choice_index)] = dump_body(choice_json(header_.kind, choice));
  usage_.completion_tokens += static_cast<int64_t>(f.output_token_ids.size());
  usage_.reasoning_tokens += std::max(f.num_reasoning_tokens, 0);
  if (!is_prompt_counted_[e.prompt_idx]) {
    is_prompt_counted_[e.prompt_idx] = true;
    usage_.prompt_tokens += f.num_prompt_tokens;
  }
  if (f.finish_reason == FinishReason::Error && error_.empty()) error_ = f.error;
  is_aborted_ |= f.finish_reason == FinishReason::Abort;
}

void WholeResponse::send(httplib::Response& res, std::shared_ptr<void> keep_alive) {
  auto body = std::make_shared<const BodyPieces>(
      completion_pieces(header_, std::move(choice_texts_), usage_));
  choice_texts_.clear();
  res.status = 200;
  const size_t size = body->size();
  res.set_content_provider(
      size, "application/json",
      [body](size_t offset, size_t length, httplib::DataSink& sink) {
        return body->write(offset, length, sink);
      },
      [keep_alive = std::move(keep_alive)](bool) {});
}

}  // namespace sluice
