#include "app/server/completion_response.h"

namespace sluice {

namespace {

using Json = nlohmann::json;

Json usage_json(const Usage& usage) {
  return {{"prompt_tokens", usage.prompt_tokens},
          {"completion_tokens", usage.completion_tokens},
          {"total_tokens", usage.prompt_tokens + usage.completion_tokens}};
}

Json header_json(const ResponseHeader& header, const char* text_object, const char* chat_object) {
  return {{"id", header.id},
          {"object", header.kind == CompletionKind::Text ? text_object : chat_object},
          {"created", header.created},
          {"model", header.model}};
}

}  // namespace

Json finish_reason_json(FinishReason reason) {
  if (reason == FinishReason::None) return nullptr;
  return to_string(reason);
}

Json completion_json(const ResponseHeader& header, const std::vector<Choice>& choices,
                     const Usage& usage) {
  Json out = header_json(header, "text_completion", "chat.completion");
  Json list = Json::array();
  for (const Choice& c : choices) {
    Json choice = {{"index", c.index}};
    if (header.kind == CompletionKind::Text) {
      choice["text"] = c.text;
      choice["logprobs"] = nullptr;
    } else {
      choice["message"] = {{"role", "assistant"}, {"content", c.text}};
      choice["logprobs"] = nullptr;
    }
    choice["finish_reason"] = finish_reason_json(c.finish_reason);
    list.push_back(std::move(choice));
  }
  out["choices"] = std::move(list);
  out["usage"] = usage_json(usage);
  return out;
}

Json chunk_json(const ResponseHeader& header, int index, const std::string& text, bool is_first,
                FinishReason finish_reason, bool include_usage) {
  Json out = header_json(header, "text_completion", "chat.completion.chunk");
  Json choice = {{"index", index}};
  if (header.kind == CompletionKind::Text) {
    choice["text"] = text;
    choice["logprobs"] = nullptr;
  } else {
    Json delta = Json::object();
    if (is_first) delta["role"] = "assistant";
    if (!text.empty() || finish_reason == FinishReason::None) delta["content"] = text;
    choice["delta"] = std::move(delta);
    choice["logprobs"] = nullptr;
  }
  choice["finish_reason"] = finish_reason_json(finish_reason);
  out["choices"] = Json::array({std::move(choice)});
  if (include_usage) out["usage"] = nullptr;
  return out;
}

Json usage_chunk_json(const ResponseHeader& header, const Usage& usage) {
  Json out = header_json(header, "text_completion", "chat.completion.chunk");
  out["choices"] = Json::array();
  out["usage"] = usage_json(usage);
  return out;
}

Json models_json(const std::string& model, int64_t created, int max_model_len) {
  return {{"object", "list"},
          {"data", Json::array({{{"id", model},
                                 {"object", "model"},
                                 {"created", created},
                                 {"owned_by", "sluice"},
                                 {"max_model_len", max_model_len}}})}};
}

std::string dump_body(const Json& value) {
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string sse_event(const Json& value) {
  return "data: " + dump_body(value) + "\n\n";
}

}  // namespace sluice
