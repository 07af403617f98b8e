#include "app/batch_response.h"

#include "app/batch_request.h"
#include "app/server/completion_response.h"
#include "engine/export/export_rows.h"

namespace sluice {

namespace {

FinishReason finish_reason_of(const std::string& name) {
  if (name == "stop") return FinishReason::Stop;
  if (name == "length") return FinishReason::Length;
  if (name == "abort") return FinishReason::Abort;
  if (name == "error") return FinishReason::Error;
  return FinishReason::None;
}

// Puts each sample's reasoning beside its message's content under both names servers use:
// reasoning_content (DeepSeek's API, llama.cpp's server) and reasoning (vLLM's newer one), so a
// reader of either finds it. Samples without reasoning keep the message as it was.
void add_reasoning(nlohmann::json& response, const RowResult& row) {
  nlohmann::json& choices = response["choices"];
  for (size_t i = 0; i < row.samples.size() && i < choices.size(); ++i) {
    const SampleResult& sample = row.samples[i];
    if (!has_reasoning(sample)) continue;
    choices[i]["message"]["reasoning_content"] = sample.reasoning;
    choices[i]["message"]["reasoning"] = sample.reasoning;
  }
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
  int64_t num_reasoning_tokens = 0;
  for (size_t i = 0; i < row.samples.size(); ++i) {
    const SampleResult& sample = row.samples[i];
    // A text completion has no field for reasoning: its text is what the model wrote, reasoning
    // first, as the keep mode writes it.
    choices.push_back(
        Choice{.index = static_cast<int>(i),
               .text = kind == CompletionKind::Chat ? sample.output : output_with_reasoning(sample),
               .finish_reason = finish_reason_of(sample.finish_reason),
               .logprobs = nullptr});
    usage.completion_tokens += sample.output_tokens;
    num_reasoning_tokens += sample.reasoning_tokens;
  }
  nlohmann::json response = completion_json(header, choices, usage);
  if (kind == CompletionKind::Chat) add_reasoning(response, row);
  if (num_reasoning_tokens != 0)
    response["usage"]["completion_tokens_details"] = {{"reasoning_tokens", num_reasoning_tokens}};
  return response;
}

ExportOptions with_batch_responses(ExportOptions options) {
  options.batch_response_body = batch_response_body;
  return options;
}

}  // namespace sluice
