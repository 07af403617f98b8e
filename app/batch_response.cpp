#include "app/batch_response.h"

#include "app/batch_request.h"
#include "app/server/completion_response.h"

namespace sluice {

namespace {

FinishReason finish_reason_of(const std::string& name) {
  if (name == "stop") return FinishReason::Stop;
  if (name == "length") return FinishReason::Length;
  if (name == "abort") return FinishReason::Abort;
  if (name == "error") return FinishReason::Error;
  return FinishReason::None;
}

}  // namespace

nlohmann::json batch_response_body(const RowResult& row, const std::string& request_id,
                                   int64_t created) {
  const CompletionKind kind = batch_line_kind(row.input).value_or(CompletionKind::Chat);
  ResponseHeader header;
  header.kind = kind;
  header.id = (kind == CompletionKind::Chat ? "chatcmpl-" : "cmpl-") + request_id;
  header.created = created;
  const auto body = row.input.find("body");
  if (body != row.input.end() && body->is_object()) {
    const auto model = body->find("model");
    if (model != body->end() && model->is_string()) header.model = model->get<std::string>();
  }
  std::vector<Choice> choices;
  Usage usage{.prompt_tokens = row.prompt_tokens};
  for (size_t i = 0; i < row.samples.size(); ++i) {
    const SampleResult& sample = row.samples[i];
    choices.push_back(Choice{.index = static_cast<int>(i),
                             .text = sample.output,
                             .finish_reason = finish_reason_of(sample.finish_reason),
                             .logprobs = nullptr});
    usage.completion_tokens += sample.output_tokens;
  }
  return completion_json(header, choices, usage);
}

ExportOptions with_batch_responses(ExportOptions options) {
  options.batch_response_body = batch_response_body;
  return options;
}

}  // namespace sluice
