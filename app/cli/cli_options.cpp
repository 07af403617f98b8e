#include "app/cli/cli_options.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "engine/backend/device.h"
#include "engine/core/error.h"
#include "engine/core/system_memory.h"
#include "engine/runner/sampler.h"

namespace sluice::cli {

namespace {

std::string text(const QString& s) {
  return s.toStdString();
}

// True when the run goes to the CPU (the default device, or auto without a GPU). A device that
// cannot be had counts as not the CPU here: the run reports it when it starts.
bool runs_on_cpu(const QCommandLineParser& parser) {
  try {
    return resolve_device(parser.isSet("device") ? text(parser.value("device")) : "cpu") < 0;
  } catch (const Error&) {
    return false;
  }
}

// Refuses a memory size the machine cannot give before the model loads: on the CPU the KV
// cache lives in host memory, where Linux would grant too much and kill the process later.
void check_fits_host_memory(const QCommandLineParser& parser, size_t num_bytes,
                            const QString& option_name) {
  const size_t available = available_system_memory_bytes();
  if (available == 0 || num_bytes <= available || !runs_on_cpu(parser)) return;
  const auto gib = [](size_t bytes) {
    return QString::number(static_cast<double>(bytes) / (1 << 30), 'f', 1).toStdString();
  };
  throw UsageError("--" + text(option_name) + " " + text(parser.value(option_name)) + " is " +
                   gib(num_bytes) + " GiB, more than the " + gib(available) +
                   " GiB of memory this machine has available");
}

}  // namespace

void parse_command_line(QCommandLineParser& parser, const QStringList& args, const char* command,
                        const char* epilogue) {
  QStringList argv = args;
  argv.prepend(QString("sluice ") + command);
  if (!parser.parse(argv)) throw UsageError(parser.errorText().toStdString());
  if (parser.isSet("help")) {
    std::printf("%s%s", parser.helpText().toStdString().c_str(), epilogue);
    std::exit(0);
  }
  if (!parser.positionalArguments().isEmpty()) {
    throw UsageError("unexpected argument '" + parser.positionalArguments().front().toStdString() +
                     "'");
  }
}

long long option_int(const QCommandLineParser& parser, const QString& name, long long fallback,
                     long long min_value, long long max_value) {
  if (!parser.isSet(name)) return fallback;
  bool ok = false;
  const long long value = parser.value(name).toLongLong(&ok);
  if (!ok)
    throw UsageError("--" + text(name) + " expects an integer, got '" + text(parser.value(name)) +
                     "'");
  if (value < min_value || value > max_value) {
    throw UsageError("--" + text(name) + " must be between " + std::to_string(min_value) + " and " +
                     std::to_string(max_value) + ", got " + std::to_string(value));
  }
  return value;
}

double option_double(const QCommandLineParser& parser, const QString& name, double fallback) {
  if (!parser.isSet(name)) return fallback;
  bool ok = false;
  const double value = parser.value(name).toDouble(&ok);
  if (!ok || !std::isfinite(value)) {
    throw UsageError("--" + text(name) + " expects a number, got '" + text(parser.value(name)) +
                     "'");
  }
  return value;
}

size_t parse_bytes(const QString& value, const QString& option_name) {
  QString digits = value.trimmed().toUpper();
  if (digits.endsWith('B')) digits.chop(1);
  double multiplier = 1.0;
  if (!digits.isEmpty()) {
    const QChar suffix = digits.back();
    const QString suffixes = "KMGT";
    if (const auto idx = suffixes.indexOf(suffix); idx >= 0) {
      multiplier = std::pow(1024.0, static_cast<double>(idx + 1));
      digits.chop(1);
    }
  }
  bool ok = false;
  const double number = digits.toDouble(&ok);
  if (!ok || number <= 0 || !std::isfinite(number * multiplier) ||
      number * multiplier > static_cast<double>(std::numeric_limits<int64_t>::max())) {
    throw UsageError("--" + text(option_name) + " expects a size such as 512M or 2G, got '" +
                     text(value) + "'");
  }
  return static_cast<size_t>(number * multiplier);
}

QString required_option(const QCommandLineParser& parser, const QString& name) {
  if (!parser.isSet(name) || parser.value(name).isEmpty())
    throw UsageError("--" + text(name) + " is required");
  return parser.value(name);
}

void add_engine_options(QCommandLineParser& parser) {
  parser.addOptions({
      {"max-num-seqs", "Requests in one step at most (default 256).", "N"},
      {"max-num-batched-tokens",
       "Tokens in one step at most (default 512 on the CPU, 2048 on a GPU).", "N"},
      {"kv-cache-bytes", "Memory for the paged KV cache, e.g. 512M or 2G.", "BYTES"},
      {"kv-blocks", "Size the KV cache in blocks instead of bytes.", "N"},
      {"block-size", "Tokens per KV block (default 16).", "N"},
      {"max-model-len", "Cap on prompt + output tokens per request (default: the model's context).",
       "N"},
      {"no-prefix-caching", "Do not share KV blocks between requests with a common prefix."},
      {"threads", "CPU threads (default: all cores).", "N"},
      {"device", "cpu, cuda, cuda:N or auto (default cpu).", "DEVICE"},
      {"gpu-memory-utilization",
       "GPU: share of device memory for weights, activations and the KV cache (default 0.90).",
       "F"},
      {"kv-cache-dtype",
       "KV cache elements: auto (the activation type on a GPU, float32 on the CPU) or fp8 (GPU: "
       "E4M3 with a scale per token and head, about twice the rows in flight).",
       "TYPE"},
      {"cpu-moe",
       "GPU, mixture-of-experts models: keep every layer's experts in host memory and run them "
       "on the CPU (attention and the router stay on the GPU)."},
      {"n-cpu-moe", "As --cpu-moe for the first N layers only.", "N"},
  });
}

EngineConfig read_engine_options(const QCommandLineParser& parser) {
  EngineConfig config;
  config.max_num_seqs =
      static_cast<int>(option_int(parser, "max-num-seqs", config.max_num_seqs, 1, 1 << 16));
  config.max_num_batched_tokens = static_cast<int>(
      option_int(parser, "max-num-batched-tokens", config.max_num_batched_tokens, 1, 1 << 24));
  config.block_size =
      static_cast<int>(option_int(parser, "block-size", config.block_size, 1, 1024));
  config.num_kv_blocks = static_cast<int>(option_int(parser, "kv-blocks", 0, 1, 1 << 30));
  if (parser.isSet("kv-cache-bytes")) {
    if (parser.isSet("kv-blocks"))
      throw UsageError("give --kv-cache-bytes or --kv-blocks, not both");
    config.kv_cache_bytes = parse_bytes(parser.value("kv-cache-bytes"), "kv-cache-bytes");
    check_fits_host_memory(parser, config.kv_cache_bytes, "kv-cache-bytes");
  }
  config.max_model_len = static_cast<int>(option_int(parser, "max-model-len", 0, 1, 1 << 30));
  config.enable_prefix_caching = !parser.isSet("no-prefix-caching");
  config.gpu_memory_utilization =
      option_double(parser, "gpu-memory-utilization", config.gpu_memory_utilization);
  if (!(config.gpu_memory_utilization > 0.0 && config.gpu_memory_utilization <= 1.0)) {
    throw UsageError("--gpu-memory-utilization must be in (0, 1], got " +
                     text(parser.value("gpu-memory-utilization")));
  }
  if (parser.isSet("kv-cache-dtype")) {
    const QString name = parser.value("kv-cache-dtype").toLower();
    try {
      config.kv_cache_dtype = parse_kv_cache_dtype(text(name));
    } catch (const Error&) {
      throw UsageError("--kv-cache-dtype must be auto or fp8, got '" + text(name) + "'");
    }
  }
  if (parser.isSet("cpu-moe") && parser.isSet("n-cpu-moe"))
    throw UsageError("give --cpu-moe or --n-cpu-moe, not both");
  if (parser.isSet("cpu-moe")) config.num_cpu_moe_layers = kAllMoeLayers;
  config.num_cpu_moe_layers = static_cast<int>(
      option_int(parser, "n-cpu-moe", config.num_cpu_moe_layers, 0, kAllMoeLayers));
  return config;
}

int read_thread_count(const QCommandLineParser& parser) {
  return static_cast<int>(option_int(parser, "threads", 0, 1, 1024));
}

std::string read_device(const QCommandLineParser& parser) {
  return parser.isSet("device") ? text(parser.value("device")) : std::string("cpu");
}

void add_sampling_options(QCommandLineParser& parser) {
  parser.addOptions({
      {"max-tokens", "New tokens per output at most (default 256).", "N"},
      {"temperature", "0 = greedy (default), higher = more random.", "T"},
      {"top-p", "Nucleus sampling mass (default 1 = off).", "P"},
      {"top-k", "Keep the K most likely tokens (default 0 = off).", "K"},
      {"min-p", "Drop tokens below P x the top probability (default 0 = off).", "P"},
      {"repetition-penalty", "Penalise tokens already in prompt or output (default 1 = off).", "R"},
      {"presence-penalty", "Penalise tokens already in the output (default 0).", "P"},
      {"frequency-penalty", "Penalise tokens by their count in the output (default 0).", "F"},
      {"seed", "Random seed (default 0); outputs depend only on seed, row and position.", "S"},
      {"stop", "Stop when the output contains S (repeatable; S is not kept).", "S"},
      {"stop-token-id", "Stop when this token id is generated (repeatable).", "ID"},
      {"ignore-eos", "Keep generating past the end-of-sequence token."},
      {"n", "Samples per prompt (default 1).", "N"},
  });
}

SamplingParams read_sampling_options(const QCommandLineParser& parser) {
  SamplingParams p;
  p.max_tokens = static_cast<int>(option_int(parser, "max-tokens", p.max_tokens, 1, 1 << 24));
  p.temperature = static_cast<float>(option_double(parser, "temperature", p.temperature));
  p.top_p = static_cast<float>(option_double(parser, "top-p", p.top_p));
  p.top_k = static_cast<int>(option_int(parser, "top-k", p.top_k, 0, 1 << 24));
  p.min_p = static_cast<float>(option_double(parser, "min-p", p.min_p));
  p.repetition_penalty =
      static_cast<float>(option_double(parser, "repetition-penalty", p.repetition_penalty));
  p.presence_penalty =
      static_cast<float>(option_double(parser, "presence-penalty", p.presence_penalty));
  p.frequency_penalty =
      static_cast<float>(option_double(parser, "frequency-penalty", p.frequency_penalty));
  if (parser.isSet("seed")) {
    bool ok = false;
    p.seed = parser.value("seed").toULongLong(&ok);
    if (!ok)
      throw UsageError("--seed expects a non-negative integer, got '" + text(parser.value("seed")) +
                       "'");
  }
  for (const QString& stop : parser.values("stop")) p.stop.push_back(text(stop));
  for (const QString& id : parser.values("stop-token-id")) {
    bool ok = false;
    const int value = id.toInt(&ok);
    if (!ok || value < 0)
      throw UsageError("--stop-token-id expects a token id, got '" + text(id) + "'");
    p.stop_token_ids.push_back(value);
  }
  p.ignore_eos = parser.isSet("ignore-eos");
  p.n = static_cast<int>(option_int(parser, "n", 1, 1, 1024));
  try {
    validate_sampling_params(p);
  } catch (const std::exception& e) {
    throw UsageError(e.what());
  }
  return p;
}

void print_error(const char* command, const std::string& message) {
  std::fprintf(stderr, "sluice %s: %s\n", command, message.c_str());
}

void add_reasoning_options(QCommandLineParser& parser) {
  parser.addOptions({
      {"thinking",
       "A thinking model reasons before it answers (on) or answers at once (off); default: as "
       "its chat template renders the prompt.",
       "on|off"},
      {"reasoning-effort", "How much a model that reads it reasons (gpt-oss): low, medium, high.",
       "E"},
      {"reasoning-budget",
       "Reasoning tokens at most; then the closing tag is written and the answer follows.", "N"},
      {"reasoning-format",
       "How outputs split into reasoning and answer: auto (from the chat template, default), "
       "none, think (<think> tags), thought-channel (Gemma 4), harmony (gpt-oss).",
       "F"},
  });
}

JsonGrammarOptions read_json_grammar_options(const QCommandLineParser& parser) {
  JsonGrammarOptions options;
  const auto read = [&](const char* name, auto parse, auto& target) {
    if (!parser.isSet(name)) return;
    try {
      target = parse(parser.value(name).toStdString());
    } catch (const Error& e) {
      throw UsageError(str_cat("--", name, ": ", e.what()));
    }
  };
  read("schema-mode", parse_schema_mode, options.mode);
  read("json-whitespace", parse_json_whitespace, options.whitespace);
  return options;
}

ReasoningControls read_reasoning_options(const QCommandLineParser& parser) {
  ReasoningControls controls;
  if (parser.isSet("thinking")) {
    const std::string value = text(parser.value("thinking"));
    if (value != "on" && value != "off")
      throw UsageError(str_cat("--thinking takes on or off, not '", value, "'"));
    controls.thinking = value == "on";
  }
  if (parser.isSet("reasoning-effort")) controls.effort = text(parser.value("reasoning-effort"));
  if (parser.isSet("reasoning-budget"))
    controls.budget = static_cast<int>(option_int(parser, "reasoning-budget", -1, 0, 1 << 24));
  if (parser.isSet("reasoning-format")) {
    const std::string value = text(parser.value("reasoning-format"));
    if (value != "auto") {
      controls.format = parse_reasoning_format(value);
      if (!controls.format)
        throw UsageError(
            str_cat("--reasoning-format takes auto, none, think, thought-channel or harmony, not '",
                    value, "'"));
    }
  }
  if (!controls.effort.empty() && controls.effort != "low" && controls.effort != "medium" &&
      controls.effort != "high") {
    throw UsageError(
        str_cat("--reasoning-effort takes low, medium or high, not '", controls.effort, "'"));
  }
  return controls;
}

}  // namespace sluice::cli
