#include "app/server/completion_request.h"

#include <cmath>
#include <limits>
#include <set>

#include "app/server/api_error.h"
#include "engine/core/error.h"
#include "engine/core/json_depth.h"
#include "engine/core/json_parse.h"
#include "engine/input/utf8_validation.h"
#include "engine/sched/token_logprobs.h"

namespace sluice {

namespace {

using Json = nlohmann::json;

const char* type_name(const Json& value) {
  return json_type_name(value);
}

// Returns the parameter's value, or nullptr when absent or null (clients send null for "unset").
const Json* find_param(const Json& body, const char* name) {
  const auto it = body.find(name);
  return it == body.end() || it->is_null() ? nullptr : &*it;
}

double number_param(const Json& value, const char* name, double min_value, double max_value) {
  if (!value.is_number())
    throw bad_request(name, str_cat("'", name, "' must be a number, not ", type_name(value)));
  const double x = value.get<double>();
  if (!std::isfinite(x) || x < min_value || x > max_value)
    throw bad_request(name, str_cat("'", name, "' must be between ", min_value, " and ", max_value,
                                    ", not ", value.dump()));
  return x;
}

int64_t int_param(const Json& value, const char* name, int64_t min_value, int64_t max_value) {
  if (!value.is_number_integer())
    throw bad_request(name, str_cat("'", name, "' must be an integer, not ",
                                    value.is_number() ? value.dump() : type_name(value)));
  if (value.is_number_unsigned() && value.get<uint64_t>() > static_cast<uint64_t>(max_value))
    throw bad_request(name, str_cat("'", name, "' must be between ", min_value, " and ", max_value,
                                    ", not ", value.dump()));
  const int64_t x = value.get<int64_t>();
  if (x < min_value || x > max_value)
    throw bad_request(
        name, str_cat("'", name, "' must be between ", min_value, " and ", max_value, ", not ", x));
  return x;
}

bool bool_param(const Json& value, const char* name) {
  if (!value.is_boolean())
    throw bad_request(name, str_cat("'", name, "' must be a boolean, not ", type_name(value)));
  return value.get<bool>();
}

std::vector<std::string> stop_param(const Json& value) {
  std::vector<std::string> out;
  if (value.is_string()) {
    out.push_back(value.get<std::string>());
  } else if (value.is_array()) {
    if (value.size() > kMaxStopStrings)
      throw bad_request("stop", str_cat("'stop' may hold at most ", kMaxStopStrings, " strings"));
    for (const auto& s : value) {
      if (!s.is_string())
        throw bad_request("stop", "'stop' must be a string or an array of strings");
      out.push_back(s.get<std::string>());
    }
  } else {
    throw bad_request(
        "stop", str_cat("'stop' must be a string or an array of strings, not ", type_name(value)));
  }
  for (const auto& s : out) {
    if (s.empty()) throw bad_request("stop", "'stop' strings must not be empty");
  }
  return out;
}

std::vector<int32_t> token_array(const Json& value, const std::string& param) {
  std::vector<int32_t> ids;
  for (const auto& id : value) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 ||
        id.get<int64_t>() > std::numeric_limits<int32_t>::max())
      throw bad_request(
          param, str_cat("'", param, "' token ids must be non-negative integers, not ", id.dump()));
    ids.push_back(static_cast<int32_t>(id.get<int64_t>()));
  }
  return ids;
}

// A prompt: a string, an array of strings, an array of token ids, or an array of such arrays.
std::vector<CompletionPrompt> prompts_param(const Json& value) {
  std::vector<CompletionPrompt> out;
  const auto too_many = [] {
    return bad_request("prompt", str_cat("'prompt' may hold at most ", kMaxPrompts, " prompts"));
  };
  if (value.is_string()) {
    out.push_back({.text = value.get<std::string>()});
  } else if (value.is_array() && !value.empty() && value.front().is_number()) {
    out.push_back({.token_ids = token_array(value, "prompt"), .is_tokens = true});
  } else if (value.is_array() && !value.empty()) {
    if (value.size() > kMaxPrompts) throw too_many();
    for (const auto& p : value) {
      if (p.is_string()) {
        out.push_back({.text = p.get<std::string>()});
      } else if (p.is_array() && !p.empty()) {
        out.push_back({.token_ids = token_array(p, "prompt"), .is_tokens = true});
      } else {
        throw bad_request("prompt", "'prompt' must be a string, an array of strings, or token ids");
      }
    }
  } else {
    throw bad_request(
        "prompt",
        str_cat("'prompt' must be a non-empty string, array of strings, or token ids, not ",
                value.is_array() ? "an empty array" : type_name(value)));
  }
  return out;
}

void check_known_fields(const Json& body, CompletionKind kind) {
  static const std::set<std::string> common = {"model",
                                               "n",
                                               "seed",
                                               "temperature",
                                               "top_p",
                                               "top_k",
                                               "min_p",
                                               "max_tokens",
                                               "stop",
                                               "presence_penalty",
                                               "frequency_penalty",
                                               "repetition_penalty",
                                               "ignore_eos",
                                               "stream",
                                               "stream_options",
                                               "logprobs",
                                               "top_logprobs",
                                               "user",
                                               "logit_bias",
                                               "best_of",
                                               "structured_outputs",
                                               "schema_mode",
                                               "json_whitespace"};
  static const std::set<std::string> text_only = {"prompt", "echo", "suffix"};
  static const std::set<std::string> chat_only = {
      "messages",         "max_completion_tokens", "tools",
      "tool_choice",      "response_format",       "parallel_tool_calls",
      "reasoning_effort", "chat_template_kwargs"};
  const auto& own = kind == CompletionKind::Text ? text_only : chat_only;
  for (const auto& [key, value] : body.items()) {
    if (!common.count(key) && !own.count(key))
      throw bad_request(key, str_cat("unknown parameter '", key, "'"));
  }
}

// Parameters the engine cannot honour: a 400 when they ask for something, never a silent drop.
void refuse_unsupported(const Json& body) {
  if (const Json* v = find_param(body, "echo"); v && !(v->is_boolean() && !v->get<bool>()))
    throw unsupported_parameter("echo");
  if (const Json* v = find_param(body, "best_of"); v && *v != Json(1))
    throw unsupported_parameter("best_of");
  if (const Json* v = find_param(body, "suffix");
      v && !(v->is_string() && v->get<std::string>().empty()))
    throw unsupported_parameter("suffix");
  if (const Json* v = find_param(body, "logit_bias"); v && !v->empty())
    throw unsupported_parameter("logit_bias");
  if (const Json* v = find_param(body, "tools"); v && !v->empty())
    throw unsupported_parameter("tools");
  if (find_param(body, "tool_choice")) throw unsupported_parameter("tool_choice");
}

// response_format: {"type": "text" | "json_object" | "json_schema", "json_schema": {"name",
// "schema", "strict"}}.
std::optional<GrammarSource> response_format_grammar(const Json& v) {
  if (!v.is_object() || !v.contains("type") || !v["type"].is_string())
    throw bad_request("response_format", "'response_format' must be an object with a 'type'");
  const std::string type = v["type"].get<std::string>();
  if (type == "text") return std::nullopt;
  if (type == "json_object")
    return GrammarSource{GrammarSourceKind::JsonObject, "response_format", "", {}};
  if (type != "json_schema") {
    throw bad_request(
        "response_format.type",
        "'response_format.type' must be text, json_object or json_schema, not '" + type + "'");
  }
  const auto it = v.find("json_schema");
  if (it == v.end() || !it->is_object() || !it->contains("schema") ||
      !((*it)["schema"].is_object() || (*it)["schema"].is_boolean())) {
    throw bad_request("response_format.json_schema",
                      "'response_format.json_schema' must be an object with a 'schema' object");
  }
  if (it->contains("strict") && !(*it)["strict"].is_boolean())
    throw bad_request("response_format.json_schema.strict", "'strict' must be a boolean");
  return GrammarSource{
      GrammarSourceKind::JsonSchema, "response_format.json_schema", (*it)["schema"].dump(), {}};
}

// vLLM's structured_outputs: exactly one of json (a schema, as an object or its text),
// json_object (true), regex, choice (strings) or grammar (GBNF).
GrammarSource structured_outputs_grammar(const Json& v) {
  if (!v.is_object() || v.size() != 1) {
    throw bad_request("structured_outputs",
                      "'structured_outputs' must be an object with exactly one of json, "
                      "json_object, regex, choice or grammar");
  }
  const std::string key = v.begin().key();  // (not through items(): its proxy is a temporary)
  const Json& value = v.begin().value();
  const std::string where = "structured_outputs." + key;
  if (key == "json" && value.is_object())
    return {GrammarSourceKind::JsonSchema, where, value.dump(), {}};
  if (key == "json" && value.is_string())
    return {GrammarSourceKind::JsonSchema, where, value.get<std::string>(), {}};
  if (key == "json_object" && value == Json(true))
    return {GrammarSourceKind::JsonObject, where, "", {}};
  if (key == "regex" && value.is_string())
    return {GrammarSourceKind::Regex, where, value.get<std::string>(), {}};
  if (key == "grammar" && value.is_string())
    return {GrammarSourceKind::Gbnf, where, value.get<std::string>(), {}};
  if (key == "choice" && value.is_array() && !value.empty()) {
    GrammarSource source{GrammarSourceKind::Choice, where, "", {}};
    for (const Json& choice : value) {
      if (!choice.is_string())
        throw bad_request(where, "'" + where + "' must be an array of strings");
      source.choices.push_back(choice.get<std::string>());
    }
    return source;
  }
  if (key == "json" || key == "json_object" || key == "regex" || key == "grammar" ||
      key == "choice")
    throw bad_request(where, "'" + where + "' has the wrong type (" + type_name(value) + ")");
  throw bad_request(where, "unknown structured output '" + key + "'");
}

// Sluice's schema_mode ("strict" | "best-effort") and json_whitespace ("flexible" | "compact")
// over the server's (or a job's) defaults, for a JSON grammar; checked whatever the grammar.
JsonGrammarOptions read_json_options(const Json& body, const JsonGrammarOptions& defaults) {
  JsonGrammarOptions options = defaults;
  const auto read = [&](const char* key, auto parse, auto& target) {
    const Json* v = find_param(body, key);
    if (!v) return;
    try {
      if (!v->is_string()) fail("it must be a string");
      target = parse(v->get<std::string>());
    } catch (const Error& e) {
      throw bad_request(key, str_cat("'", key, "': ", e.what()));
    }
  };
  read("schema_mode", parse_schema_mode, options.mode);
  read("json_whitespace", parse_json_whitespace, options.whitespace);
  return options;
}

void read_grammar(const Json& body, CompletionRequest& r, const JsonGrammarOptions& defaults) {
  const Json* format = find_param(body, "response_format");
  const Json* outputs = find_param(body, "structured_outputs");
  if (format && outputs) {
    throw bad_request("structured_outputs",
                      "give 'response_format' or 'structured_outputs', not both");
  }
  if (format) {
    r.grammar = response_format_grammar(*format);
    r.grammar_param = "response_format";
  } else if (outputs) {
    r.grammar = structured_outputs_grammar(*outputs);
    r.grammar_param = "structured_outputs";
  }
  const JsonGrammarOptions options = read_json_options(body, defaults);
  if (r.grammar) r.grammar = with_json_options(std::move(*r.grammar), options);
}

// reasoning_effort (OpenAI) and chat_template_kwargs (vLLM: template variables; enable_thinking
// among them is the thinking control too, so the prompt is adjusted as the template was told).
void read_reasoning(const Json& body, CompletionRequest& r) {
  if (const Json* v = find_param(body, "reasoning_effort")) {
    const std::string effort = v->is_string() ? v->get<std::string>() : "";
    if (effort != "low" && effort != "medium" && effort != "high")
      throw bad_request("reasoning_effort",
                        str_cat("'reasoning_effort' must be low, medium or high, not ",
                                v->is_string() ? "'" + effort + "'" : v->dump()));
    r.reasoning_effort = effort;
  }
  const Json* kwargs = find_param(body, "chat_template_kwargs");
  if (!kwargs) return;
  if (!kwargs->is_object())
    throw bad_request(
        "chat_template_kwargs",
        str_cat("'chat_template_kwargs' must be an object, not ", type_name(*kwargs)));
  if (const Json* v = find_param(*kwargs, "enable_thinking"))
    r.thinking = bool_param(*v, "chat_template_kwargs.enable_thinking");
  r.template_kwargs = nlohmann::ordered_json(*kwargs);
}

// Text completions: logprobs N (0..20, the top N with each token). Chat: logprobs true, with
// top_logprobs N (0..20) beside it.
void read_logprobs(const Json& body, CompletionKind kind, SamplingParams& s) {
  const Json* logprobs = find_param(body, "logprobs");
  const Json* top = find_param(body, "top_logprobs");
  if (kind == CompletionKind::Text) {
    if (top)
      throw bad_request("top_logprobs", "'top_logprobs' is a chat parameter; use 'logprobs'");
    if (logprobs)
      s.logprobs = static_cast<int>(int_param(*logprobs, "logprobs", 0, kMaxTopLogprobs));
    return;
  }
  const bool wanted = logprobs && bool_param(*logprobs, "logprobs");
  if (top && !wanted)
    throw bad_request("top_logprobs", "'top_logprobs' needs 'logprobs' set to true");
  if (wanted)
    s.logprobs = top ? static_cast<int>(int_param(*top, "top_logprobs", 0, kMaxTopLogprobs)) : 0;
}

void read_sampling(const Json& body, CompletionKind kind, CompletionRequest& r) {
  SamplingParams& s = r.sampling;
  if (const Json* v = find_param(body, "n"))
    s.n = static_cast<int>(int_param(*v, "n", 1, kMaxChoices));
  if (const Json* v = find_param(body, "seed")) {
    s.seed = static_cast<uint64_t>(int_param(*v, "seed", std::numeric_limits<int64_t>::min(),
                                             std::numeric_limits<int64_t>::max()));
    r.has_seed = true;
  }
  if (const Json* v = find_param(body, "temperature"))
    s.temperature = static_cast<float>(number_param(*v, "temperature", 0.0, 2.0));
  if (const Json* v = find_param(body, "top_p")) {
    s.top_p = static_cast<float>(number_param(*v, "top_p", 0.0, 1.0));
    if (s.top_p <= 0.0f) throw bad_request("top_p", "'top_p' must be greater than 0");
  }
  if (const Json* v = find_param(body, "top_k"))
    s.top_k = static_cast<int>(int_param(*v, "top_k", -1, 1 << 20));
  if (const Json* v = find_param(body, "min_p"))
    s.min_p = static_cast<float>(number_param(*v, "min_p", 0.0, 1.0));
  if (const Json* v = find_param(body, "presence_penalty"))
    s.presence_penalty = static_cast<float>(number_param(*v, "presence_penalty", -2.0, 2.0));
  if (const Json* v = find_param(body, "frequency_penalty"))
    s.frequency_penalty = static_cast<float>(number_param(*v, "frequency_penalty", -2.0, 2.0));
  if (const Json* v = find_param(body, "repetition_penalty")) {
    s.repetition_penalty = static_cast<float>(number_param(*v, "repetition_penalty", 0.0, 10.0));
    if (s.repetition_penalty <= 0.0f)
      throw bad_request("repetition_penalty", "'repetition_penalty' must be greater than 0");
  }
  const char* max_name = "max_tokens";
  const Json* max_tokens = find_param(body, "max_tokens");
  if (kind == CompletionKind::Chat) {
    if (const Json* v = find_param(body, "max_completion_tokens")) {
      max_tokens = v;
      max_name = "max_completion_tokens";
    }
  }
  if (max_tokens) s.max_tokens = static_cast<int>(int_param(*max_tokens, max_name, 1, 1 << 24));
  if (const Json* v = find_param(body, "stop")) s.stop = stop_param(*v);
  if (const Json* v = find_param(body, "ignore_eos")) s.ignore_eos = bool_param(*v, "ignore_eos");
  read_logprobs(body, kind, s);
  if (const Json* v = find_param(body, "stream")) r.stream = bool_param(*v, "stream");
  if (const Json* v = find_param(body, "stream_options")) {
    if (!v->is_object()) throw bad_request("stream_options", "'stream_options' must be an object");
    for (const auto& [key, value] : v->items()) {
      if (key != "include_usage")
        throw bad_request("stream_options",
                          str_cat("unknown parameter 'stream_options.", key, "'"));
      if (!value.is_null()) r.include_usage = bool_param(value, "stream_options.include_usage");
    }
  }
}

}  // namespace

Json parse_request_body(std::string_view body) {
  if (const auto bad = find_invalid_utf8(body))
    throw bad_request("", str_cat("the request body is not UTF-8: ",
                                  describe_invalid_utf8(body, *bad), " at byte ", *bad));
  if (const auto deep = find_json_nesting_past(body, kMaxRequestJsonDepth))
    throw bad_request("", str_cat("the request body nests deeper than ", kMaxRequestJsonDepth,
                                  " levels at ", text_position(body, *deep)));
  Json value;
  if (const auto failure = try_parse_json(body, value))
    throw bad_request("", str_cat("the request body is ", describe_json_failure(body, *failure)));
  if (!value.is_object())
    throw bad_request("",
                      str_cat("the request body must be a JSON object, not ", type_name(value)));
  return value;
}

PromptRequestOptions prompt_request_options(const CompletionRequest& request,
                                            const ReasoningControls& defaults) {
  PromptRequestOptions options;
  options.reasoning = defaults;
  if (!request.reasoning_effort.empty()) options.reasoning.effort = request.reasoning_effort;
  if (request.thinking) options.reasoning.thinking = request.thinking;
  options.constrained_answer = request.grammar.has_value();
  options.template_kwargs = request.template_kwargs;
  return options;
}

Conversation parse_messages(const Json& messages) {
  if (!messages.is_array() || messages.empty())
    throw bad_request("messages", "'messages' must be a non-empty array of {role, content}");
  Conversation out;
  for (size_t i = 0; i < messages.size(); ++i) {
    const Json& m = messages[i];
    const std::string where = str_cat("messages[", i, "]");
    if (!m.is_object())
      throw bad_request(where, str_cat("'", where, "' must be an object, not ", type_name(m)));
    const auto role = m.find("role");
    if (role == m.end() || !role->is_string())
      throw bad_request(where + ".role", str_cat("'", where, ".role' must be a string"));
    ChatMessage message{role->get<std::string>(), ""};
    if (message.role != "system" && message.role != "user" && message.role != "assistant" &&
        message.role != "developer")
      throw bad_request(
          where + ".role",
          str_cat("'", where, ".role' must be system, developer, user or assistant, not '",
                  message.role, "'"));
    if (message.role == "developer") message.role = "system";
    const auto content = m.find("content");
    if (content == m.end() || content->is_null()) {
      throw bad_request(where + ".content", str_cat("'", where, ".content' is missing"));
    } else if (content->is_string()) {
      message.content = content->get<std::string>();
    } else if (content->is_array()) {
      for (const auto& part : *content) {
        if (!part.is_object() || part.value("type", "") != "text" || !part.contains("text") ||
            !part["text"].is_string())
          throw bad_request(
              where + ".content",
              str_cat("'", where, ".content' parts must be {\"type\": \"text\", \"text\": ...}"));
        message.content += part["text"].get<std::string>();
      }
    } else {
      throw bad_request(
          where + ".content",
          str_cat("'", where, ".content' must be a string or an array of text parts"));
    }
    // A past assistant turn's reasoning (llama.cpp and DeepSeek send reasoning_content, vLLM
    // reasoning): the chat template renders it where its family puts it.
    for (const char* key : {"reasoning_content", "reasoning", "thinking"}) {
      const auto it = m.find(key);
      if (it == m.end() || it->is_null()) continue;
      if (!it->is_string())
        throw bad_request(str_cat(where, ".", key),
                          str_cat("'", where, ".", key, "' must be a string"));
      message.reasoning = it->get<std::string>();
      break;
    }
    out.push_back(std::move(message));
  }
  return out;
}

CompletionRequest parse_completion_request(const Json& body, CompletionKind kind,
                                           const SamplingParams& defaults,
                                           const JsonGrammarOptions& json_defaults) {
  CompletionRequest r;
  r.kind = kind;
  r.sampling = defaults;
  check_known_fields(body, kind);
  refuse_unsupported(body);
  const Json* model = find_param(body, "model");
  if (!model || !model->is_string()) throw bad_request("model", "'model' must be a string");
  r.model = model->get<std::string>();
  if (kind == CompletionKind::Text) {
    const Json* prompt = find_param(body, "prompt");
    if (!prompt) throw bad_request("prompt", "'prompt' is required");
    r.prompts = prompts_param(*prompt);
  } else {
    const Json* messages = find_param(body, "messages");
    if (!messages) throw bad_request("messages", "'messages' is required");
    r.messages = parse_messages(*messages);
  }
  read_sampling(body, kind, r);
  read_grammar(body, r, json_defaults);
  if (kind == CompletionKind::Chat) read_reasoning(body, r);
  if (r.prompts.size() * static_cast<size_t>(r.sampling.n) > kMaxPrompts)
    throw bad_request("n", str_cat("prompts times 'n' must be at most ", kMaxPrompts));
  return r;
}

}  // namespace sluice
