// sluice serve: an OpenAI-compatible HTTP server over one loaded model (app/server). The model
// loads once into an EngineService; every request is a client of it. Runs until SIGINT or
// SIGTERM, then finishes the responses in flight as aborted and exits 0.
#include <QCommandLineParser>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <thread>

#include "app/cli/cli_command.h"
#include "app/cli/cli_options.h"
#include "app/grammar_notes.h"
#include "app/server/openai_server.h"
#include "app/server/server_memory.h"
#include "engine/backend/make_backend.h"
#include "engine/core/error.h"
#include "engine/core/mapped_file.h"
#include "engine/jobs/job_info.h"
#include "engine/model_session.h"

namespace sluice::cli {

namespace {

constexpr const char* kCommand = "serve";

volatile std::sig_atomic_t g_stop = 0;

void on_stop_signal(int) {
  g_stop = 1;
}

struct ServeArgs {
  std::string model_path;
  std::string tokenizer_path;
  std::string device;
  int num_threads = 0;
  ServiceConfig service;
  ServerOptions server;
  bool allow_unauthenticated = false;
};

ServeArgs parse_args(const QStringList& args) {
  QCommandLineParser parser;
  parser.setApplicationDescription(
      "Serve a model over an OpenAI-compatible HTTP API: /v1/models, /v1/completions, "
      "/v1/chat/completions (streaming as server-sent events), /tokenize, /detokenize, "
      "/health and /metrics (Prometheus). Sampling, reasoning and JSON grammar options set the "
      "defaults of requests (a request's reasoning_effort, chat_template_kwargs.enable_thinking, "
      "schema_mode and json_whitespace override them).");
  parser.addHelpOption();
  parser.addOptions({
      {"model", "Model: a Hugging Face directory, a .gguf file or a llama2.c .bin.", "PATH"},
      {"tokenizer", "Tokenizer file, when not beside or inside the model.", "PATH"},
      {"host", "Address to listen on (default 127.0.0.1).", "HOST"},
      {"port", "Port to listen on (default 8000; 0 = any free port, printed).", "PORT"},
      {"api-key", "Require 'Authorization: Bearer KEY' on /v1 and tokenizer routes.", "KEY"},
      {"allow-unauthenticated",
       "Serve on an address other machines can reach (--host other than 127.0.0.1, ::1 or "
       "localhost) without --api-key: anyone who reaches the port can generate."},
      {"protect-metrics", "/metrics needs the API key too (by default it is open, like /health)."},
      {"served-model-name", "The model name clients ask for (default: the --model path).", "NAME"},
      {"chat-template", "Jinja chat template file to use instead of the model's.", "FILE"},
      {"max-num-waiting", "Requests waiting for a batch slot at most; more get 503 (default 4096).",
       "N"},
      {"max-body-bytes",
       "Largest request body, counted as read (chunked or compressed too); larger ones get 413 "
       "(default 8M).",
       "BYTES"},
      {"max-body-bytes-in-flight",
       "Most bytes of request bodies read and parsed at once, all requests together; past it "
       "requests get 503 (default 16M).",
       "BYTES"},
      {"max-response-entries",
       "Most tokens and top log-probabilities one answer may hold: n x prompts x max_tokens x "
       "(1 + top_logprobs); more is a 400 (default 1048576).",
       "N"},
      {"max-response-entries-in-flight",
       "Most the answers in flight may hold together; past it requests get 503 (default "
       "4194304).",
       "N"},
      {"write-timeout",
       "Seconds a client may leave its stream unread before it is cut off (default 10).", "S"},
      {"schema-mode",
       "A JSON Schema keyword the grammar cannot enforce exactly, in response_format and "
       "structured_outputs: strict (default; the request gets a 400 naming it) or best-effort "
       "(it is dropped, and logged). A request's \"schema_mode\" overrides it.",
       "MODE"},
      {"json-whitespace",
       "Whitespace JSON outputs may hold between tokens: flexible (default) or compact (none: "
       "JSON.stringify's separators). A request's \"json_whitespace\" overrides it.",
       "MODE"},
  });
  add_engine_options(parser);
  add_sampling_options(parser);
  add_reasoning_options(parser);
  parse_command_line(parser, args, kCommand);
  ServeArgs a;
  a.model_path = required_option(parser, "model").toStdString();
  a.tokenizer_path = parser.value("tokenizer").toStdString();
  a.device = read_device(parser);
  a.num_threads = read_thread_count(parser);
  a.service.engine = read_engine_options(parser);
  a.service.max_num_waiting =
      static_cast<int>(option_int(parser, "max-num-waiting", 4096, 1, 1 << 20));
  a.server.host = parser.isSet("host") ? parser.value("host").toStdString() : "127.0.0.1";
  a.server.port = static_cast<int>(option_int(parser, "port", 8000, 0, 65535));
  a.server.api_key = parser.value("api-key").toStdString();
  a.server.is_metrics_protected = parser.isSet("protect-metrics");
  if (a.server.is_metrics_protected && a.server.api_key.empty())
    throw UsageError("--protect-metrics needs --api-key");
  a.allow_unauthenticated = parser.isSet("allow-unauthenticated");
  if (!is_loopback_host(a.server.host) && a.server.api_key.empty() && !a.allow_unauthenticated)
    throw UsageError(str_cat("--host ", a.server.host,
                             " can be reached from other machines: give --api-key KEY, or "
                             "--allow-unauthenticated to serve anyone who reaches the port"));
  a.server.served_model_name = parser.isSet("served-model-name")
                                   ? parser.value("served-model-name").toStdString()
                                   : a.model_path;
  if (a.server.served_model_name.empty()) throw UsageError("--served-model-name must not be empty");
  if (parser.isSet("max-body-bytes"))
    a.server.max_body_bytes = parse_bytes(parser.value("max-body-bytes"), "--max-body-bytes");
  if (parser.isSet("max-body-bytes-in-flight"))
    a.server.max_body_bytes_in_flight =
        parse_bytes(parser.value("max-body-bytes-in-flight"), "--max-body-bytes-in-flight");
  if (a.server.max_body_bytes_in_flight < a.server.max_body_bytes)
    throw UsageError("--max-body-bytes-in-flight must be at least --max-body-bytes");
  a.server.write_timeout_s = static_cast<int>(option_int(parser, "write-timeout", 10, 1, 3600));
  a.server.max_response_entries = static_cast<uint64_t>(
      option_int(parser, "max-response-entries",
                 static_cast<long long>(a.server.max_response_entries), 1, 1LL << 40));
  a.server.max_response_entries_in_flight = static_cast<uint64_t>(
      option_int(parser, "max-response-entries-in-flight",
                 static_cast<long long>(a.server.max_response_entries_in_flight), 1, 1LL << 40));
  if (a.server.max_response_entries_in_flight < a.server.max_response_entries)
    throw UsageError("--max-response-entries-in-flight must be at least --max-response-entries");
  if (parser.isSet("chat-template"))
    a.server.chat_template = read_text_file(parser.value("chat-template").toStdString());
  try {
    a.server.reasoning = read_reasoning_options(parser);  // requests' own controls override them
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
  a.server.defaults = read_sampling_options(parser);
  a.server.json_grammar = read_json_grammar_options(parser);
  a.server.has_default_seed = parser.isSet("seed");
  return a;
}

int serve(const ServeArgs& a) {
  // A missing GPU (or a cache it would need) is reported before the model loads.
  check_backend_choice(a.device, a.service.engine.kv_cache_dtype);
  auto session =
      std::make_shared<const ModelSession>(open_model_session(a.model_path, a.tokenizer_path));
  ServiceConfig config = a.service;
  // The requests' compiled grammars: the 64 most recently used sources (as the README says),
  // within the cache's symbol budget. What a compile ignored or dropped is logged as it is built:
  // once per distinct grammar while the cache keeps it.
  config.grammars =
      std::make_shared<GrammarCache>(64, 4 * kMaxGrammarSymbols, [](const GrammarSource& source) {
        Grammar grammar = build_grammar(source);
        for (const std::string& line :
             grammar_note_lines(source.name, grammar.notes(), kMaxJobGrammarNotes))
          std::fprintf(stderr, "sluice serve: %s\n", line.c_str());
        return grammar;
      });
  auto service = std::make_shared<EngineService>(
      session,
      make_backend(*session->model, a.device, a.num_threads, config.engine.kv_cache_dtype,
                   config.engine.num_cpu_moe_layers),
      config);
  OpenAiServer server(service, a.server);
  const int port = server.bind();
  std::printf("sluice serve: %s on %s as '%s'\nlistening on http://%s:%d\n",
              session->model->config.describe().c_str(), service->backend_description().c_str(),
              a.server.served_model_name.c_str(), a.server.host.c_str(), port);
  std::fflush(stdout);
  if (!is_loopback_host(a.server.host) && a.server.api_key.empty()) {
    std::fprintf(stderr,
                 "sluice serve: WARNING: serving on %s:%d without an API key "
                 "(--allow-unauthenticated): anyone who can reach this port can use the model\n",
                 a.server.host.c_str(), port);
  }
  g_stop = 0;
  std::signal(SIGINT, on_stop_signal);
  std::signal(SIGTERM, on_stop_signal);
  std::atomic<bool> is_done{false};
  std::thread watcher([&] {
    while (!g_stop && !is_done.load()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    server.stop();
  });
  server.listen();
  is_done = true;
  watcher.join();
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  std::fprintf(stderr, "sluice serve: stopped\n");
  return 0;
}

}  // namespace

int run_serve(const QStringList& args) {
  // Before any thread of the server or the engine exists: glibc fixes its arena count with the
  // first thread that needs one of its own.
  tune_malloc_for_serving(kMaxServerMallocArenas);
  ServeArgs parsed;
  try {
    parsed = parse_args(args);
  } catch (const UsageError& e) {
    print_error(kCommand, std::string(e.what()) + " (see sluice serve --help)");
    return 2;
  } catch (const std::exception& e) {
    print_error(kCommand, e.what());
    return 1;
  }
  try {
    return serve(parsed);
  } catch (const std::exception& e) {
    print_error(kCommand, e.what());
    return 1;
  }
}

}  // namespace sluice::cli
