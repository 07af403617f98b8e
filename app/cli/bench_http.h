// `sluice bench --endpoint URL`: the seed's experiment against an OpenAI-compatible server.
// Every row is one streaming request (stream: true, stream_options.include_usage); the client
// reads the server-sent events itself, so it sees when each content delta arrives: time to
// first token, the gaps between tokens, and the output token count of the usage chunk. Mode
// sequential sends one request at a time, mode concurrent keeps num_clients in flight (each
// client thread takes the next row). A failed request is counted with its status and message and
// never stops the run.
#pragma once

#include <QStringList>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/service/request_service.h"

namespace sluice::cli {

enum class HttpBenchMode { Sequential, Concurrent };

const char* to_string(HttpBenchMode mode);
// "sequential" or "concurrent"; throws Error naming the mode otherwise.
HttpBenchMode parse_http_bench_mode(const std::string& name);

struct HttpBenchSpec {
  std::string endpoint;    // the server's /v1 base, e.g. http://127.0.0.1:8000/v1
  std::string model;       // the model asked for; "" = the server's first one (check_http_endpoint)
  std::string api_key;     // sent as a bearer token; "" = none
  int num_clients = 256;   // concurrent mode: requests in flight at once
  double timeout_s = 600;  // one request, connection to last byte
};

struct HttpBenchResult {
  HttpBenchMode mode = HttpBenchMode::Sequential;
  int num_clients = 1;
  size_t num_requests = 0;  // sent, failed ones included
  size_t num_errors = 0;
  std::vector<std::string> error_samples;  // the first few distinct error messages
  double wall_s = 0.0;
  int64_t prompt_tokens = 0;  // from the usage chunks of the requests that succeeded
  int64_t output_tokens = 0;
  double ttft_p50_ms = 0.0, ttft_p99_ms = 0.0;  // request sent to its first content delta
  double itl_p50_ms = 0.0, itl_p99_ms = 0.0;    // between consecutive content deltas

  double requests_per_s() const { return wall_s > 0 ? (num_requests - num_errors) / wall_s : 0.0; }
  double output_tokens_per_s() const { return wall_s > 0 ? output_tokens / wall_s : 0.0; }
};

// Asks the server for its models (GET <endpoint>/models) and returns the model to ask for:
// spec.model when given, else the first one listed. Throws Error naming the URL when nothing
// answers there, the key is refused or the answer lists no model.
std::string check_http_endpoint(const HttpBenchSpec& spec);

// Runs every request once in the mode (the requests' is_chat picks /chat/completions or
// /completions) and returns the measurements. spec.model must be set.
HttpBenchResult run_http_bench_mode(HttpBenchMode mode, const std::vector<ServiceRequest>& requests,
                                    const HttpBenchSpec& spec);

// Returns true when the arguments ask for the HTTP benchmark (--endpoint is among them).
bool wants_http_bench(const QStringList& args);
// The whole `sluice bench --endpoint` command: returns the exit code (0 done, 1 failed, 2 usage).
int run_http_bench(const QStringList& args);

}  // namespace sluice::cli
