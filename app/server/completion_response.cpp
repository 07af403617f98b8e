#include "app/server/completion_response.h"

#include <algorithm>
#include <cmath>

namespace sluice {

namespace {

using Json = nlohmann::json;

constexpr double kImpossibleLogprob = -9999.0;  // OpenAI's stand-in for -inf

Json usage_json(const Usage& usage) {
  Json out = {{"prompt_tokens", usage.prompt_tokens},
              {"completion_tokens", usage.completion_tokens},
              {"total_tokens", usage.prompt_tokens + usage.completion_tokens}};
  if (usage.reasoning_tokens > 0)
    out["completion_tokens_details"] = {{"reasoning_tokens", usage.reasoning_tokens}};
  return out;
}

// A reasoning goes out under both names clients read: reasoning_content (llama.cpp's server,
// DeepSeek's API, most clients) and reasoning (vLLM's newer name).
void add_reasoning(Json& message, const std::string& reasoning) {
  message["reasoning_content"] = reasoning;
  message["reasoning"] = reasoning;
}

Json header_json(const ResponseHeader& header, const char* text_object, const char* chat_object) {
  return {{"id", header.id},
          {"object", header.kind == CompletionKind::Text ? text_object : chat_object},
          {"created", header.created},
          {"model", header.model}};
}

}  // namespace

Json logprobs_json(CompletionKind kind, std::span<const int32_t> ids,
                   std::span<const TokenLogprobs> logprobs, const TokenBytesFn& bytes_of,
                   size_t first_offset) {
  const auto number = [](float logprob) {
    return std::isfinite(logprob) ? static_cast<double>(logprob) : kImpossibleLogprob;
  };
  const size_t n = std::min(ids.size(), logprobs.size());
  if (kind == CompletionKind::Text) {
    Json tokens = Json::array(), token_logprobs = Json::array(), top = Json::array();
    Json offsets = Json::array();
    size_t offset = first_offset;
    for (size_t i = 0; i < n; ++i) {
      const std::string bytes = bytes_of(ids[i]);
      tokens.push_back(bytes);
      token_logprobs.push_back(number(logprobs[i].logprob));
      Json entry = Json::object();
      for (const auto& [id, logprob] : logprobs[i].top) {
        const std::string key = bytes_of(id);
        if (!entry.contains(key)) entry[key] = number(logprob);  // the likelier of equal texts
      }
      top.push_back(std::move(entry));
      offsets.push_back(offset);
      offset += bytes.size();
    }
    return {{"tokens", std::move(tokens)},
            {"token_logprobs", std::move(token_logprobs)},
            {"top_logprobs", std::move(top)},
            {"text_offset", std::move(offsets)}};
  }
  const auto token_entry = [&](int32_t id, float logprob) {
    const std::string bytes = bytes_of(id);
    Json byte_values = Json::array();
    for (const char b : bytes) byte_values.push_back(static_cast<int>(static_cast<uint8_t>(b)));
    return Json{{"token", bytes}, {"logprob", number(logprob)}, {"bytes", std::move(byte_values)}};
  };
  Json content = Json::array();
  for (size_t i = 0; i < n; ++i) {
    Json entry = token_entry(ids[i], logprobs[i].logprob);
    Json top = Json::array();
    for (const auto& [id, logprob] : logprobs[i].top) top.push_back(token_entry(id, logprob));
    entry["top_logprobs"] = std::move(top);
    content.push_back(std::move(entry));
  }
  return {{"content", std::move(content)}};
}

Json finish_reason_json(FinishReason reason) {
  if (reason == FinishReason::None) return nullptr;
  return to_string(reason);
}

Json choice_json(CompletionKind kind, const Choice& c) {
  Json choice = {{"index", c.index}};
  if (kind == CompletionKind::Text) {
    choice["text"] = c.text;
  } else {
    Json message = {{"role", "assistant"}, {"content", c.text}};
    if (!c.reasoning.empty()) add_reasoning(message, c.reasoning);
    choice["message"] = std::move(message);
  }
  choice["logprobs"] = c.logprobs;
  choice["finish_reason"] = finish_reason_json(c.finish_reason);
  return choice;
}

Json completion_json(const ResponseHeader& header, const std::vector<Choice>& choices,
                     const Usage& usage) {
  Json out = header_json(header, "text_completion", "chat.completion");
  Json list = Json::array();
  for (const Choice& c : choices) list.push_back(choice_json(header.kind, c));
  out["choices"] = std::move(list);
  out["usage"] = usage_json(usage);
  return out;
}

std::vector<std::string> completion_pieces(const ResponseHeader& header,
                                           std::vector<std::string> choice_texts,
                                           const Usage& usage) {
  std::string head = dump_body(header_json(header, "text_completion", "chat.completion"));
  head.pop_back();  // the closing brace: the choices and usage follow
  head += R"(,"choices":[)";
  std::vector<std::string> pieces;
  pieces.reserve(choice_texts.size() + 2);
  pieces.push_back(std::move(head));
  for (size_t i = 0; i < choice_texts.size(); ++i) {
    if (i + 1 < choice_texts.size()) choice_texts[i] += ',';
    pieces.push_back(std::move(choice_texts[i]));
  }
  pieces.push_back(R"(],"usage":)" + dump_body(usage_json(usage)) + "}");
  return pieces;
}

Json chunk_json(const ResponseHeader& header, int index, const std::string& text, bool is_first,
                FinishReason finish_reason, bool include_usage, const Json& logprobs) {
  Json out = header_json(header, "text_completion", "chat.completion.chunk");
  Json choice = {{"index", index}};
  if (header.kind == CompletionKind::Text) {
    choice["text"] = text;
  } else {
    Json delta = Json::object();
    if (is_first) delta["role"] = "assistant";
    if (!text.empty() || finish_reason == FinishReason::None) delta["content"] = text;
    choice["delta"] = std::move(delta);
  }
  choice["logprobs"] = logprobs;
  choice["finish_reason"] = finish_reason_json(finish_reason);
  out["choices"] = Json::array({std::move(choice)});
  if (include_usage) out["usage"] = nullptr;
  return out;
}

Json reasoning_chunk_json(const ResponseHeader& header, int index, const std::string& reasoning,
                          bool is_first, bool include_usage, const Json& logprobs) {
  Json out = header_json(header, "text_completion", "chat.completion.chunk");
  Json delta = Json::object();
  if (is_first) delta["role"] = "assistant";
  add_reasoning(delta, reasoning);
  Json choice = {{"index", index}, {"delta", std::move(delta)}, {"logprobs", logprobs}};
  choice["finish_reason"] = nullptr;
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
