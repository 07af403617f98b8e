#include "app/remote/remote_protocol.h"

#include <algorithm>
#include <cctype>
#include <ctime>

#include "engine/core/error.h"

namespace sluice {

namespace {

using Json = nlohmann::json;

std::string valid_utf8(std::string_view text) {
  // Round trip through JSON's dump with replacement: invalid bytes become U+FFFD.
  const std::string dumped =
      Json(std::string(text)).dump(-1, ' ', false, Json::error_handler_t::replace);
  return Json::parse(dumped).get<std::string>();
}

void add_grammar(Json& body, const GrammarSource& g, bool is_chat) {
  Json structured;
  switch (g.kind) {
    case GrammarSourceKind::JsonSchema: {
      Json schema = Json::parse(g.text, nullptr, false);
      if (schema.is_discarded())
        throw InvalidGrammar(str_cat(g.name, ": the JSON Schema is not JSON"));
      if (is_chat) {
        body["response_format"] = {
            {"type", "json_schema"},
            {"json_schema", {{"name", "output"}, {"schema", std::move(schema)}, {"strict", true}}}};
        return;
      }
      structured["json"] = std::move(schema);
      break;
    }
    case GrammarSourceKind::JsonObject:
      if (is_chat) {
        body["response_format"] = {{"type", "json_object"}};
        return;
      }
      structured["json_object"] = true;
      break;
    case GrammarSourceKind::Regex:
      structured["regex"] = g.text;
      break;
    case GrammarSourceKind::Choice:
      structured["choice"] = g.choices;
      break;
    case GrammarSourceKind::Gbnf:
      structured["grammar"] = g.text;
      break;
  }
  body["structured_outputs"] = std::move(structured);
}

FinishReason finish_reason_of(const Json& value) {
  if (!value.is_string()) fail("the answer's choice has no finish_reason");
  const std::string reason = value.get<std::string>();
  if (reason == "stop" || reason == "eos" || reason == "tool_calls" || reason == "function_call" ||
      reason == "content_filter")
    return FinishReason::Stop;
  if (reason == "length") return FinishReason::Length;
  fail("the answer's finish_reason '", valid_utf8(reason).substr(0, 40),
       "' is not one Sluice knows");
}

// Why a choice's text is null, with what the server sent instead when it says (a refusal, tool
// calls).
std::string null_text_reason(const Json& choice, bool is_chat) {
  std::string reason =
      str_cat("the answer's ", is_chat ? "message.content" : "text", " is null, not text");
  const auto message = choice.find("message");
  if (!is_chat || message == choice.end() || !message->is_object()) return reason;
  const auto refusal = message->find("refusal");
  if (refusal != message->end() && refusal->is_string()) {
    constexpr size_t kMaxRefusalBytes = 200;
    const std::string text = refusal->get<std::string>();
    reason += str_cat(" (the model refused: ", valid_utf8(text.substr(0, kMaxRefusalBytes)),
                      text.size() > kMaxRefusalBytes ? "…)" : ")");
  } else if (message->contains("tool_calls") || message->contains("function_call")) {
    reason += " (the model called a tool instead)";
  }
  return reason;
}

// Returns object[key], a count; -1 when absent. where: the object's path, for the error.
int count_of(const Json& object, const char* key, const char* where = "usage.") {
  if (!object.is_object() || !object.contains(key)) return -1;
  const Json& v = object[key];
  if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > (int64_t{1} << 30))
    fail("the answer's ", where, key, " is not a count");
  return static_cast<int>(v.get<int64_t>());
}

// A chat message's reasoning: reasoning_content (llama.cpp's server, DeepSeek, SGLang) or
// reasoning (vLLM's newer name), the first when a server sends both; "" when neither is text.
std::string reasoning_of(const Json& choice) {
  const auto message = choice.find("message");
  if (message == choice.end() || !message->is_object()) return {};
  for (const char* key : {"reasoning_content", "reasoning"}) {
    const auto it = message->find(key);
    if (it == message->end() || it->is_null()) continue;
    if (!it->is_string()) fail("the answer's message.", key, " is not text");
    return it->get<std::string>();
  }
  return {};
}

void add_reasoning_controls(Json& body, const ReasoningControls& reasoning) {
  if (!reasoning.effort.empty()) body["reasoning_effort"] = reasoning.effort;
  if (reasoning.thinking) body["chat_template_kwargs"] = {{"enable_thinking", *reasoning.thinking}};
}

}  // namespace

const char* remote_request_path(const ServiceRequest& request) {
  return request.is_chat ? "/chat/completions" : "/completions";
}

Json remote_request_body(const ServiceRequest& request, const std::string& model, int64_t seed,
                         const ReasoningControls& reasoning) {
  const SamplingParams& p = request.sampling;
  Json body = Json::object();
  body["model"] = model;
  if (request.is_chat) {
    Json messages = Json::array();
    for (const ChatMessage& m : request.messages)
      messages.push_back({{"role", valid_utf8(m.role)}, {"content", valid_utf8(m.content)}});
    body["messages"] = std::move(messages);
  } else {
    body["prompt"] = valid_utf8(request.prompt_text);
  }
  body["max_tokens"] = p.max_tokens;
  body["temperature"] = p.temperature;
  body["top_p"] = p.top_p;
  body["n"] = 1;
  body["seed"] = seed;
  if (!p.stop.empty()) {
    Json stop = Json::array();
    for (const std::string& s : p.stop) stop.push_back(valid_utf8(s));
    body["stop"] = std::move(stop);
  }
  if (p.presence_penalty != 0.0f) body["presence_penalty"] = p.presence_penalty;
  if (p.frequency_penalty != 0.0f) body["frequency_penalty"] = p.frequency_penalty;
  if (p.top_k > 0) body["top_k"] = p.top_k;
  if (p.min_p != 0.0f) body["min_p"] = p.min_p;
  if (p.repetition_penalty != 1.0f) body["repetition_penalty"] = p.repetition_penalty;
  if (!p.stop_token_ids.empty()) body["stop_token_ids"] = p.stop_token_ids;
  if (p.ignore_eos) body["ignore_eos"] = true;
  if (p.grammar) add_grammar(body, *p.grammar, request.is_chat);
  if (request.is_chat) add_reasoning_controls(body, reasoning);
  return body;
}

FinishedRequest parse_remote_response(std::string_view body, bool is_chat) {
  const Json answer = Json::parse(body, nullptr, false);
  if (answer.is_discarded() || !answer.is_object()) fail("the answer is not a JSON object");
  const auto choices = answer.find("choices");
  if (choices == answer.end() || !choices->is_array() || choices->empty())
    fail("the answer has no choices");
  const Json& choice = choices->front();
  if (!choice.is_object()) fail("the answer's choice is not an object");
  const Json* text = nullptr;
  if (is_chat) {
    const auto message = choice.find("message");
    if (message != choice.end() && message->is_object()) {
      const auto content = message->find("content");
      if (content != message->end()) text = &*content;
    }
  } else {
    const auto it = choice.find("text");
    if (it != choice.end()) text = &*it;
  }
  // OpenAI sends a null content only beside tool calls or a refusal: neither is an answer a
  // dataset row can keep, so it is malformed like any other missing text (retried, then the row
  // fails with this reason), never a finished empty row.
  if (text && text->is_null()) fail(null_text_reason(choice, is_chat));
  if (!text || !text->is_string())
    fail("the answer's choice has no ", is_chat ? "message.content" : "text", " string");
  FinishedRequest f;
  f.output_text = text->get<std::string>();
  f.finish_reason =
      finish_reason_of(choice.contains("finish_reason") ? choice["finish_reason"] : Json());
  const Json usage = answer.contains("usage") ? answer["usage"] : Json();
  f.num_prompt_tokens = std::max(0, count_of(usage, "prompt_tokens"));
  f.num_output_tokens = count_of(usage, "completion_tokens");
  if (is_chat) f.reasoning_text = reasoning_of(choice);
  const Json details = usage.is_object() && usage.contains("completion_tokens_details")
                           ? usage["completion_tokens_details"]
                           : Json();
  f.num_reasoning_tokens =
      count_of(details, "reasoning_tokens", "usage.completion_tokens_details.");
  return f;
}

std::string remote_error_message(std::string_view body) {
  const Json answer = Json::parse(body, nullptr, false);
  if (!answer.is_discarded() && answer.is_object()) {
    const auto error = answer.find("error");
    if (error != answer.end()) {
      if (error->is_object() && error->contains("message") && (*error)["message"].is_string())
        return valid_utf8((*error)["message"].get<std::string>());
      if (error->is_string()) return valid_utf8(error->get<std::string>());
    }
    if (answer.contains("message") && answer["message"].is_string())
      return valid_utf8(answer["message"].get<std::string>());
  }
  constexpr size_t kMaxBytes = 300;
  std::string text = valid_utf8(body.substr(0, kMaxBytes));
  bool is_cut = body.size() > kMaxBytes;
  if (text.size() > kMaxBytes) {  // replacement characters are longer than the bytes they replace
    size_t end = kMaxBytes;
    while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
    text.resize(end);
    is_cut = true;
  }
  if (is_cut) text += "…";
  return text;
}

std::optional<double> parse_retry_after(std::string_view value,
                                        std::chrono::system_clock::time_point now_utc) {
  while (!value.empty() && std::isspace(static_cast<unsigned char>(value.front())))
    value.remove_prefix(1);
  while (!value.empty() && std::isspace(static_cast<unsigned char>(value.back())))
    value.remove_suffix(1);
  if (value.empty()) return std::nullopt;
  if (std::isdigit(static_cast<unsigned char>(value.front()))) {
    double seconds = 0.0;
    size_t i = 0;
    for (; i < value.size() && std::isdigit(static_cast<unsigned char>(value[i])); ++i)
      seconds = std::min(1e9, seconds * 10 + (value[i] - '0'));
    if (i < value.size() && value[i] == '.') {
      double scale = 0.1;
      for (++i; i < value.size() && std::isdigit(static_cast<unsigned char>(value[i]));
           ++i, scale /= 10)
        seconds += (value[i] - '0') * scale;
    }
    if (i != value.size()) return std::nullopt;
    return seconds;
  }
  std::tm tm{};
  const std::string text(value);
  const char* end = strptime(text.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm);
  if (!end || *end != '\0') return std::nullopt;
  const std::time_t when = timegm(&tm);
  const double delay = std::difftime(when, std::chrono::system_clock::to_time_t(now_utc));
  return std::max(0.0, delay);
}

}  // namespace sluice
