#include "app/generation_spec.h"

#include <algorithm>

#include "engine/core/error.h"

namespace sluice {

namespace {

using Json = nlohmann::ordered_json;

Json sampling_to_json(const SamplingParams& p) {
  return Json{{"n", p.n},
              {"temperature", p.temperature},
              {"top_k", p.top_k},
              {"top_p", p.top_p},
              {"min_p", p.min_p},
              {"repetition_penalty", p.repetition_penalty},
              {"presence_penalty", p.presence_penalty},
              {"frequency_penalty", p.frequency_penalty},
              {"seed", p.seed},
              {"max_tokens", p.max_tokens},
              {"stop", p.stop},
              {"stop_token_ids", p.stop_token_ids},
              {"ignore_eos", p.ignore_eos}};
}

template <typename T>
T get(const Json& j, const char* key) {
  if (!j.contains(key)) fail("job parameters: missing ", key);
  try {
    return j.at(key).get<T>();
  } catch (const nlohmann::json::exception&) {
    fail("job parameters: ", key, " has the wrong type");
  }
}

SamplingParams sampling_from_json(const Json& j) {
  SamplingParams p;
  p.n = get<int>(j, "n");
  p.temperature = get<float>(j, "temperature");
  p.top_k = get<int>(j, "top_k");
  p.top_p = get<float>(j, "top_p");
  p.min_p = get<float>(j, "min_p");
  p.repetition_penalty = get<float>(j, "repetition_penalty");
  p.presence_penalty = get<float>(j, "presence_penalty");
  p.frequency_penalty = get<float>(j, "frequency_penalty");
  p.seed = get<uint64_t>(j, "seed");
  p.max_tokens = get<int>(j, "max_tokens");
  p.stop = get<std::vector<std::string>>(j, "stop");
  p.stop_token_ids = get<std::vector<int32_t>>(j, "stop_token_ids");
  p.ignore_eos = get<bool>(j, "ignore_eos");
  return p;
}

// The JSON options only when not the defaults: job files written before them read the same.
void json_options_to_json(const JsonGrammarOptions& options, Json& j) {
  if (options.whitespace != JsonWhitespace::Flexible)
    j["json_whitespace"] = to_string(options.whitespace);
  if (options.mode != SchemaMode::Strict) j["schema_mode"] = to_string(options.mode);
}

// Reads json_options_to_json's keys, the defaults when absent; where names the object in errors.
JsonGrammarOptions json_options_from_json(const Json& j, const char* where) {
  JsonGrammarOptions options;
  try {
    if (j.contains("json_whitespace"))
      options.whitespace = parse_json_whitespace(get<std::string>(j, "json_whitespace"));
    if (j.contains("schema_mode"))
      options.mode = parse_schema_mode(get<std::string>(j, "schema_mode"));
  } catch (const Error& e) {
    fail("job parameters: ", where, e.what());
  }
  return options;
}

Json grammar_to_json(const GrammarSource& g) {
  Json j{{"kind", to_string(g.kind)}, {"name", g.name}, {"text", g.text}};
  if (g.kind == GrammarSourceKind::Choice) j["choices"] = g.choices;
  json_options_to_json({.whitespace = g.whitespace, .mode = g.schema_mode}, j);
  return j;
}

GrammarSource grammar_from_json(const Json& j) {
  GrammarSource g;
  try {
    g.kind = parse_grammar_source_kind(get<std::string>(j, "kind"));
  } catch (const Error& e) {
    fail("job parameters: grammar: ", e.what());
  }
  g.name = get<std::string>(j, "name");
  g.text = get<std::string>(j, "text");
  if (g.kind == GrammarSourceKind::Choice) g.choices = get<std::vector<std::string>>(j, "choices");
  const JsonGrammarOptions options = json_options_from_json(j, "grammar: ");
  g.whitespace = options.whitespace;
  g.schema_mode = options.mode;
  return g;
}

}  // namespace

const char* to_string(BadRowPolicy policy) {
  return policy == BadRowPolicy::Skip ? "skip" : "stop";
}

BadRowPolicy parse_bad_row_policy(const std::string& name) {
  if (name == "skip") return BadRowPolicy::Skip;
  if (name == "stop") return BadRowPolicy::Stop;
  fail("--on-bad-row must be skip or stop, not '", name, "'");
}

const char* to_string(LongPromptPolicy policy) {
  switch (policy) {
    case LongPromptPolicy::Skip:
      return "skip";
    case LongPromptPolicy::Truncate:
      return "truncate";
    case LongPromptPolicy::Fail:
      break;
  }
  return "fail";
}

LongPromptPolicy parse_long_prompt_policy(const std::string& name) {
  if (name == "fail") return LongPromptPolicy::Fail;
  if (name == "skip") return LongPromptPolicy::Skip;
  if (name == "truncate") return LongPromptPolicy::Truncate;
  fail("--on-long-prompt must be fail, skip or truncate, not '", name, "'");
}

int truncated_prompt_tokens(int max_model_len, int max_tokens) {
  return std::min(max_model_len - 1, std::max(max_model_len / 2, max_model_len - max_tokens));
}

size_t job_window_size(const GenerationSpec& spec) {
  if (spec.remote.is_remote())
    return std::max<size_t>(256, 4 * static_cast<size_t>(spec.remote.concurrency));
  return std::max<size_t>(1024, 4 * static_cast<size_t>(spec.engine.max_num_seqs));
}

Json spec_to_json(const GenerationSpec& s) {
  Json j{{"model_path", s.model_path},
         {"tokenizer_path", s.tokenizer_path},
         {"input_path", s.input_path},
         {"format", to_string(s.format)},
         {"prompt_template", s.prompt.column_template},
         {"system_prompt", s.prompt.system_prompt},
         {"use_chat_template", s.prompt.use_chat_template},
         {"chat_template", s.prompt.chat_template},
         {"limit", s.limit},
         {"on_bad_row", to_string(s.on_bad_row)},
         {"token_ids", s.with_token_ids},
         {"sampling", sampling_to_json(s.sampling)},
         {"device", s.device},
         {"engine",
          {{"block_size", s.engine.block_size},
           {"num_kv_blocks", s.engine.num_kv_blocks},
           {"kv_cache_bytes", s.engine.kv_cache_bytes},
           {"max_num_seqs", s.engine.max_num_seqs},
           {"max_num_batched_tokens", s.engine.max_num_batched_tokens},
           {"max_model_len", s.engine.max_model_len},
           {"enable_prefix_caching", s.engine.enable_prefix_caching},
           {"gpu_memory_utilization", s.engine.gpu_memory_utilization}}}};
  if (s.sampling.grammar) j["grammar"] = grammar_to_json(*s.sampling.grammar);
  if (!s.schema_column.empty()) j["schema_column"] = s.schema_column;
  json_options_to_json(s.json_grammar, j);
  // Only when asked for, like on_long_prompt: jobs without reasoning controls keep their JSON.
  if (s.prompt.reasoning != ReasoningControls{}) {
    const ReasoningControls& r = s.prompt.reasoning;
    nlohmann::ordered_json reasoning = nlohmann::ordered_json::object();
    if (r.thinking) reasoning["thinking"] = *r.thinking;
    if (!r.effort.empty()) reasoning["effort"] = r.effort;
    if (r.budget >= 0) reasoning["budget"] = r.budget;
    if (r.format) reasoning["format"] = std::string(reasoning_format_name(*r.format));
    j["reasoning"] = std::move(reasoning);
  }
  if (s.remote.is_remote()) j["remote"] = remote_spec_to_json(s.remote);
  // Only when asked for: jobs that let long prompts fail keep the parameters they always had.
  if (s.on_long_prompt != LongPromptPolicy::Fail) j["on_long_prompt"] = to_string(s.on_long_prompt);
  // Only when asked for, like on_long_prompt.
  if (s.engine.kv_cache_dtype != KvCacheDType::Auto)
    j["engine"]["kv_cache_dtype"] = std::string(kv_cache_dtype_name(s.engine.kv_cache_dtype));
  if (s.engine.num_cpu_moe_layers > 0)
    j["engine"]["num_cpu_moe_layers"] = s.engine.num_cpu_moe_layers;
  return j;
}

GenerationSpec spec_from_json(const Json& j) {
  GenerationSpec s;
  s.model_path = get<std::string>(j, "model_path");
  s.tokenizer_path = get<std::string>(j, "tokenizer_path");
  s.input_path = get<std::string>(j, "input_path");
  s.format = parse_dataset_format(get<std::string>(j, "format"));
  s.prompt.column_template = get<std::string>(j, "prompt_template");
  s.prompt.system_prompt = get<std::string>(j, "system_prompt");
  s.prompt.use_chat_template = get<bool>(j, "use_chat_template");
  s.prompt.chat_template = get<std::string>(j, "chat_template");
  s.limit = get<size_t>(j, "limit");
  s.on_bad_row = parse_bad_row_policy(get<std::string>(j, "on_bad_row"));
  s.with_token_ids = get<bool>(j, "token_ids");
  s.sampling = sampling_from_json(get<Json>(j, "sampling"));
  const Json e = get<Json>(j, "engine");
  s.engine.block_size = get<int>(e, "block_size");
  s.engine.num_kv_blocks = get<int>(e, "num_kv_blocks");
  s.engine.kv_cache_bytes = get<size_t>(e, "kv_cache_bytes");
  s.engine.max_num_seqs = get<int>(e, "max_num_seqs");
  s.engine.max_num_batched_tokens = get<int>(e, "max_num_batched_tokens");
  s.engine.max_model_len = get<int>(e, "max_model_len");
  s.engine.enable_prefix_caching = get<bool>(e, "enable_prefix_caching");
  // Added with the CUDA backend: job files written before it have neither.
  if (j.contains("device")) s.device = get<std::string>(j, "device");
  if (e.contains("gpu_memory_utilization"))
    s.engine.gpu_memory_utilization = get<double>(e, "gpu_memory_utilization");
  if (e.contains("kv_cache_dtype"))
    s.engine.kv_cache_dtype = parse_kv_cache_dtype(get<std::string>(e, "kv_cache_dtype"));
  if (e.contains("num_cpu_moe_layers")) {
    s.engine.num_cpu_moe_layers = get<int>(e, "num_cpu_moe_layers");
    if (s.engine.num_cpu_moe_layers < 0 || s.engine.num_cpu_moe_layers > kAllMoeLayers)
      fail("engine.num_cpu_moe_layers must be in [0, ", kAllMoeLayers, "], got ",
           s.engine.num_cpu_moe_layers);
  }
  if (j.contains("reasoning")) {
    const nlohmann::ordered_json& r = j.at("reasoning");
    if (!r.is_object()) fail("job spec: 'reasoning' is not an object");
    ReasoningControls& controls = s.prompt.reasoning;
    if (r.contains("thinking")) controls.thinking = get<bool>(r, "thinking");
    if (r.contains("effort")) controls.effort = get<std::string>(r, "effort");
    if (r.contains("budget")) controls.budget = get<int>(r, "budget");
    if (r.contains("format")) {
      const std::string name = get<std::string>(r, "format");
      controls.format = parse_reasoning_format(name);
      if (!controls.format) fail("job spec: unknown reasoning format '", name, "'");
    }
    validate_reasoning_controls(controls);
  }
  if (j.contains("on_long_prompt"))
    s.on_long_prompt = parse_long_prompt_policy(get<std::string>(j, "on_long_prompt"));
  // Added with structured output: absent in older jobs and in unconstrained ones. Read, not
  // compiled: the service that runs the job compiles it (so opening a job compiles nothing).
  if (j.contains("grammar"))
    s.sampling.grammar =
        std::make_shared<const GrammarSource>(grammar_from_json(get<Json>(j, "grammar")));
  if (j.contains("schema_column")) s.schema_column = get<std::string>(j, "schema_column");
  // Added with best-effort schemas and compact JSON: absent when a job keeps the defaults.
  s.json_grammar = json_options_from_json(j, "");
  // Added with remote jobs: absent in local ones.
  if (j.contains("remote")) s.remote = remote_spec_from_json(get<Json>(j, "remote"));
  return s;
}

}  // namespace sluice
