// sluice bench --endpoint URL: its options, the rows as requests, and the table (or --json).
#include <QCommandLineParser>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "app/cli/bench_http.h"
#include "app/cli/cli_options.h"
#include "engine/core/error.h"
#include "engine/input/dataset_reader.h"
#include "engine/input/field_discovery.h"
#include "engine/input/prompt_builder.h"

namespace sluice::cli {

namespace {

constexpr const char* kCommand = "bench";

struct HttpBenchArgs {
  HttpBenchSpec spec;
  std::string input_path;
  size_t limit = 500;
  std::vector<HttpBenchMode> modes;
  bool use_chat_template = true;
  bool as_json = false;
  SamplingParams sampling;
};

HttpBenchArgs parse_args(const QStringList& args) {
  QCommandLineParser parser;
  parser.setApplicationDescription(
      "Benchmark an OpenAI-compatible server (sluice serve, vLLM, llama.cpp's server): every row "
      "is one streamed request, sent one at a time (sequential) and by --clients client "
      "threads at once (concurrent).");
  parser.addHelpOption();
  parser.addOptions({
      {"endpoint", "The server's OpenAI base URL, e.g. http://127.0.0.1:8000/v1.", "URL"},
      {"input", "Instruction file (JSONL with \"prompt\", or an Alpaca JSON array).", "FILE"},
      {"limit", "Rows to run (default 500).", "N"},
      {"modes", "Comma-separated: sequential,concurrent (default both).", "LIST"},
      {"clients", "Concurrent mode: requests in flight at once (default 256).", "N"},
      {"json", "Print the results as JSON instead of a table."},
      {"no-chat-template",
       "Send the filled-in text to /v1/completions instead of the messages to "
       "/v1/chat/completions."},
      {"remote-model", "The model to ask for by name (default: the server's first one).", "NAME"},
      {"api-key-env", "Environment variable holding the server's API key (sent as a bearer token).",
       "VAR"},
      {"request-timeout", "Seconds one request may take, connection to last byte (default 600).",
       "S"},
  });
  add_sampling_options(parser);
  parse_command_line(parser, args, "bench");
  HttpBenchArgs a;
  a.spec.endpoint = required_option(parser, "endpoint").toStdString();
  a.input_path = required_option(parser, "input").toStdString();
  a.limit = static_cast<size_t>(option_int(parser, "limit", 500, 1, 1LL << 40));
  a.spec.num_clients = static_cast<int>(option_int(parser, "clients", 256, 1, 1 << 14));
  a.spec.timeout_s = option_double(parser, "request-timeout", 600.0);
  if (a.spec.timeout_s <= 0) throw UsageError("--request-timeout must be above 0 seconds");
  a.spec.model = parser.value("remote-model").toStdString();
  if (parser.isSet("api-key-env")) {
    const std::string var = parser.value("api-key-env").toStdString();
    const char* key = std::getenv(var.c_str());
    if (!key || !*key)
      throw UsageError("--api-key-env " + var + ": the environment variable is not set");
    a.spec.api_key = key;
  }
  const QString modes = parser.isSet("modes") ? parser.value("modes") : "sequential,concurrent";
  for (const QString& m : modes.split(',', Qt::SkipEmptyParts)) {
    try {
      a.modes.push_back(parse_http_bench_mode(m.trimmed().toStdString()));
    } catch (const Error& e) {
      throw UsageError(e.what());
    }
  }
  if (a.modes.empty()) throw UsageError("--modes names no mode");
  a.use_chat_template = !parser.isSet("no-chat-template");
  a.as_json = parser.isSet("json");
  a.sampling = read_sampling_options(parser);
  if (!parser.isSet("max-tokens")) a.sampling.max_tokens = 128;
  if (a.sampling.n != 1)
    throw UsageError("--n does not go with --endpoint: each row is one request");
  return a;
}

// The first `limit` rows of the file as requests, their prompts built as `sluice generate
// --endpoint` builds them (default column template; the server applies its chat template);
// bad rows are left out.
std::vector<ServiceRequest> read_requests(const HttpBenchArgs& a) {
  auto reader = open_dataset(a.input_path);
  PromptOptions options;
  options.use_chat_template = a.use_chat_template;
  const PromptBuilder builder(options, reader->format(),
                              discover_fields(a.input_path, reader->format()));
  std::vector<ServiceRequest> requests;
  while (requests.size() < a.limit) {
    try {
      const auto row = reader->next();
      if (!row) break;
      BuiltPrompt prompt = builder.build(*row);
      ServiceRequest r;
      r.sampling = a.sampling;
      r.sample_key = static_cast<uint64_t>(row->row_index);
      r.messages = std::move(prompt.messages);
      r.prompt_text = std::move(prompt.text);
      r.is_chat = a.use_chat_template;
      requests.push_back(std::move(r));
    } catch (const DatasetRowError&) {
      continue;
    }
  }
  if (requests.empty()) fail(a.input_path, ": no usable rows");
  return requests;
}

// Concurrent over sequential output tokens/s, when both ran; 0 otherwise.
double concurrent_ratio(const std::vector<HttpBenchResult>& results) {
  double sequential = 0.0, concurrent = 0.0;
  for (const HttpBenchResult& r : results)
    (r.mode == HttpBenchMode::Sequential ? sequential : concurrent) = r.output_tokens_per_s();
  return sequential > 0 && concurrent > 0 ? concurrent / sequential : 0.0;
}

void print_table(const std::vector<HttpBenchResult>& results, const HttpBenchArgs& a,
                 const std::string& model) {
  std::printf("endpoint: %s, model %s, %s\nrows: %zu from %s, max_tokens %d, temperature %g%s\n\n",
              a.spec.endpoint.c_str(), model.c_str(),
              a.use_chat_template ? "/chat/completions" : "/completions",
              results.front().num_requests, a.input_path.c_str(), a.sampling.max_tokens,
              static_cast<double>(a.sampling.temperature),
              a.sampling.ignore_eos ? ", ignore_eos" : "");
  std::printf(
      "| mode | clients | rows | wall s | req/s | out tok/s | TTFT p50 ms | TTFT p99 ms | ITL p50 "
      "ms | ITL p99 ms | errors |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const HttpBenchResult& r : results)
    std::printf("| %s | %d | %zu | %.2f | %.2f | %.1f | %.1f | %.1f | %.1f | %.1f | %zu |\n",
                to_string(r.mode), r.num_clients, r.num_requests, r.wall_s, r.requests_per_s(),
                r.output_tokens_per_s(), r.ttft_p50_ms, r.ttft_p99_ms, r.itl_p50_ms, r.itl_p99_ms,
                r.num_errors);
  if (const double ratio = concurrent_ratio(results); ratio > 0)
    std::printf("\nconcurrent / sequential output tokens/s: %.2fx\n", ratio);
  std::printf(
      "\nout tok/s: completion tokens of the usage chunks over the wall time. TTFT: request sent "
      "to\nits first content delta; ITL: between consecutive content deltas (deltas read in one "
      "network\nchunk count as 0 ms apart).\n");
}

void print_json(const std::vector<HttpBenchResult>& results, const HttpBenchArgs& a,
                const std::string& model) {
  nlohmann::ordered_json out;
  out["endpoint"] = a.spec.endpoint;
  out["model"] = model;
  out["input"] = a.input_path;
  out["max_tokens"] = a.sampling.max_tokens;
  out["modes"] = nlohmann::ordered_json::array();
  for (const HttpBenchResult& r : results)
    out["modes"].push_back({{"mode", to_string(r.mode)},
                            {"clients", r.num_clients},
                            {"requests", r.num_requests},
                            {"wall_s", r.wall_s},
                            {"requests_per_s", r.requests_per_s()},
                            {"prompt_tokens", r.prompt_tokens},
                            {"output_tokens", r.output_tokens},
                            {"output_tokens_per_s", r.output_tokens_per_s()},
                            {"ttft_p50_ms", r.ttft_p50_ms},
                            {"ttft_p99_ms", r.ttft_p99_ms},
                            {"itl_p50_ms", r.itl_p50_ms},
                            {"itl_p99_ms", r.itl_p99_ms},
                            {"errors", r.num_errors},
                            {"error_samples", r.error_samples}});
  if (const double ratio = concurrent_ratio(results); ratio > 0)
    out["concurrent_over_sequential"] = ratio;
  std::printf("%s\n",
              out.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace).c_str());
}

}  // namespace

bool wants_http_bench(const QStringList& args) {
  for (const QString& arg : args)
    if (arg == "--endpoint" || arg.startsWith("--endpoint=")) return true;
  return false;
}

int run_http_bench(const QStringList& args) {
  HttpBenchArgs a;
  try {
    a = parse_args(args);
  } catch (const UsageError& e) {
    print_error(kCommand, std::string(e.what()) + " (see sluice bench --endpoint URL --help)");
    return 2;
  }
  try {
    const auto requests = read_requests(a);
    a.spec.model = check_http_endpoint(a.spec);
    std::vector<HttpBenchResult> results;
    for (const HttpBenchMode mode : a.modes) {
      std::fprintf(stderr, "bench: %s, %zu requests...\n", to_string(mode), requests.size());
      results.push_back(run_http_bench_mode(mode, requests, a.spec));
      for (const std::string& message : results.back().error_samples)
        std::fprintf(stderr, "bench: %s: %s\n", to_string(mode), message.c_str());
    }
    if (a.as_json) {
      print_json(results, a, a.spec.model);
    } else {
      print_table(results, a, a.spec.model);
    }
    for (const HttpBenchResult& r : results)
      if (r.num_errors > 0) return 3;  // as `sluice generate` when some rows failed
    return 0;
  } catch (const std::exception& e) {
    print_error(kCommand, e.what());
    return 1;
  }
}

}  // namespace sluice::cli
