#include "app/cli/bench_http.h"

#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "app/remote/http_error_text.h"
#include "app/remote/remote_driver.h"
#include "app/remote/remote_protocol.h"
#include "engine/core/error.h"

namespace sluice::cli {

namespace {

using Clock = std::chrono::steady_clock;
using Json = nlohmann::json;

// An event stream that sends this much without ending an event is refused, not buffered.
constexpr size_t kMaxEventBytes = size_t{16} << 20;
constexpr size_t kMaxErrorSamples = 5;

httplib::Headers auth_headers(const std::string& api_key) {
  httplib::Headers headers;
  if (!api_key.empty()) headers.emplace("Authorization", "Bearer " + api_key);
  return headers;
}

std::unique_ptr<httplib::Client> make_client(const EndpointUrl& e, double timeout_s) {
  auto client = std::make_unique<httplib::Client>(e.scheme_host);
  const auto timeout = std::chrono::duration<double>(timeout_s);
  client->set_connection_timeout(
      std::min<std::chrono::duration<double>>(timeout, std::chrono::seconds(10)));
  client->set_read_timeout(timeout);
  client->set_write_timeout(timeout);
  client->set_keep_alive(true);
  client->set_tcp_nodelay(true);  // else Nagle holds the body behind the headers for a delayed ACK
  return client;
}

// What one streamed request saw.
struct StreamOutcome {
  std::string error;                           // "" = it succeeded
  std::vector<Clock::time_point> delta_times;  // when each content delta arrived
  int64_t prompt_tokens = 0;
  int64_t output_tokens = -1;  // -1: no usage chunk yet
  bool is_done = false;        // data: [DONE] arrived
};

// Reads the server-sent events of one streamed completion as they arrive: each "data: {json}"
// event's content delta is timed, the usage chunk counted, "data: [DONE]" ends it and an
// {"error": ...} event fails it.
class EventStreamReader {
 public:
  explicit EventStreamReader(StreamOutcome& outcome) : outcome_(outcome) {}

  // Returns false to stop reading (an error, or an event too long).
  bool feed(const char* data, size_t size, Clock::time_point now) {
    buffer_.append(data, size);
    size_t start = 0;
    for (;;) {
      const size_t end = buffer_.find("\n\n", start);
      if (end == std::string::npos) break;
      if (!on_event(std::string_view(buffer_).substr(start, end - start), now)) return false;
      start = end + 2;
    }
    buffer_.erase(0, start);
    if (buffer_.size() > kMaxEventBytes) {
      outcome_.error = str_cat("an event of the stream ran past ", kMaxEventBytes >> 20, " MiB");
      return false;
    }
    return true;
  }

 private:
  bool on_event(std::string_view event, Clock::time_point now) {
    std::string payload;  // the event's data lines joined, as the SSE format says
    size_t pos = 0;
    while (pos <= event.size()) {
      size_t eol = event.find('\n', pos);
      if (eol == std::string_view::npos) eol = event.size();
      std::string_view line = event.substr(pos, eol - pos);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (line.substr(0, 5) == "data:") {
        line.remove_prefix(5);
        if (!line.empty() && line.front() == ' ') line.remove_prefix(1);
        if (!payload.empty()) payload += '\n';
        payload += line;
      }
      pos = eol + 1;
    }
    if (payload.empty()) return true;  // a comment or keep-alive
    if (payload == "[DONE]") {
      outcome_.is_done = true;
      return true;
    }
    const Json chunk = Json::parse(payload, nullptr, false);
    if (chunk.is_discarded() || !chunk.is_object()) {
      outcome_.error = "an event of the stream is not a JSON object";
      return false;
    }
    if (chunk.contains("error")) {
      outcome_.error = "the stream sent an error: " + remote_error_message(payload);
      return false;
    }
    if (const auto choices = chunk.find("choices"); choices != chunk.end() && choices->is_array())
      for (const Json& choice : *choices)
        if (has_content(choice)) outcome_.delta_times.push_back(now);
    if (const auto usage = chunk.find("usage"); usage != chunk.end() && usage->is_object()) {
      outcome_.output_tokens = count_of(*usage, "completion_tokens");
      outcome_.prompt_tokens = std::max<int64_t>(0, count_of(*usage, "prompt_tokens"));
      if (outcome_.output_tokens < 0) {
        outcome_.error = "the usage chunk has no completion_tokens count";
        return false;
      }
    }
    return true;
  }

  // The usage's count under key; -1 when it is missing or not a non-negative integer.
  static int64_t count_of(const Json& usage, const char* key) {
    const auto it = usage.find(key);
    if (it == usage.end() || !it->is_number_integer()) return -1;
    return std::max<int64_t>(-1, it->get<int64_t>());
  }

  static bool has_content(const Json& choice) {
    if (!choice.is_object()) return false;
    const Json* text = nullptr;
    if (const auto delta = choice.find("delta"); delta != choice.end() && delta->is_object()) {
      if (const auto content = delta->find("content"); content != delta->end()) text = &*content;
    } else if (const auto it = choice.find("text"); it != choice.end()) {
      text = &*it;
    }
    return text && text->is_string() && !text->get_ref<const std::string&>().empty();
  }

  StreamOutcome& outcome_;
  std::string buffer_;
};

// Sends one request and reads its stream to the end.
StreamOutcome stream_request(httplib::Client& client, const EndpointUrl& e, const std::string& body,
                             const char* path, const HttpBenchSpec& spec, Clock::time_point& sent) {
  StreamOutcome outcome;
  EventStreamReader reader(outcome);
  int status = 0;
  std::string error_body;
  httplib::Request req;
  req.method = "POST";
  req.path = e.base_path + path;
  req.headers = auth_headers(spec.api_key);
  req.headers.emplace("Content-Type", "application/json");
  req.headers.emplace("Accept", "text/event-stream");
  req.body = body;
  req.response_handler = [&](const httplib::Response& res) {
    status = res.status;
    return true;
  };
  req.content_receiver = [&](const char* data, size_t size, uint64_t, uint64_t) {
    if (status != 200) {  // an error body: keep its start for the message
      error_body.append(data,
                        std::min(size, size_t{4096} - std::min(size_t{4096}, error_body.size())));
      return true;
    }
    return reader.feed(data, size, Clock::now());
  };
  sent = Clock::now();
  const httplib::Result res = client.send(req);
  if (!outcome.error.empty()) return outcome;
  if (status != 0 && status != 200) {
    outcome.error = str_cat("HTTP ", status, ": ", remote_error_message(error_body));
  } else if (!res) {
    outcome.error = http_error_text(res.error());
  } else if (!outcome.is_done) {
    outcome.error = "the stream ended before data: [DONE]";
  } else if (outcome.output_tokens < 0) {
    outcome.error = "the stream sent no usage chunk (stream_options.include_usage)";
  }
  return outcome;
}

// Nearest-rank percentile of sorted values; 0 when there are none.
double percentile(const std::vector<double>& sorted, int pct) {
  if (sorted.empty()) return 0.0;
  return sorted[std::min(sorted.size() - 1, sorted.size() * static_cast<size_t>(pct) / 100)];
}

// The measurements of every request of a mode, gathered by the client threads.
struct ModeTally {
  std::mutex mutex;
  HttpBenchResult result;
  std::vector<double> ttft_ms, itl_ms;

  void add(const StreamOutcome& o, Clock::time_point sent, size_t row_idx) {
    const std::lock_guard lock(mutex);
    ++result.num_requests;
    if (!o.error.empty()) {
      ++result.num_errors;
      const std::string message = str_cat("request ", row_idx + 1, ": ", o.error);
      if (result.error_samples.size() < kMaxErrorSamples) result.error_samples.push_back(message);
      return;
    }
    result.prompt_tokens += o.prompt_tokens;
    result.output_tokens += o.output_tokens;
    if (o.delta_times.empty()) return;
    using Ms = std::chrono::duration<double, std::milli>;
    ttft_ms.push_back(Ms(o.delta_times.front() - sent).count());
    for (size_t i = 1; i < o.delta_times.size(); ++i)
      itl_ms.push_back(Ms(o.delta_times[i] - o.delta_times[i - 1]).count());
  }
};

}  // namespace

const char* to_string(HttpBenchMode mode) {
  return mode == HttpBenchMode::Sequential ? "sequential" : "concurrent";
}

HttpBenchMode parse_http_bench_mode(const std::string& name) {
  if (name == "sequential") return HttpBenchMode::Sequential;
  if (name == "concurrent") return HttpBenchMode::Concurrent;
  fail("unknown mode '", name, "' of --endpoint (sequential or concurrent)");
}

std::string check_http_endpoint(const HttpBenchSpec& spec) {
  const EndpointUrl e = parse_endpoint_url(spec.endpoint);
  httplib::Client client(e.scheme_host);
  client.set_connection_timeout(std::chrono::seconds(5));
  client.set_read_timeout(std::chrono::seconds(30));
  const auto res = client.Get(e.base_path + "/models", auth_headers(spec.api_key));
  if (!res)
    fail(e.url, " does not answer (", http_error_text(res.error()),
         "): is a server running there?");
  if (res->status == 401 || res->status == 403)
    fail(e.url, " refused the API key (HTTP ", res->status, ")",
         spec.api_key.empty() ? "; give the key's variable with --api-key-env" : "");
  if (res->status != 200)
    fail(e.url, "/models answered HTTP ", res->status, ": ", remote_error_message(res->body));
  if (!spec.model.empty()) return spec.model;
  const Json models = Json::parse(res->body, nullptr, false);
  if (models.is_object() && models.contains("data") && models["data"].is_array())
    for (const Json& m : models["data"])
      if (m.is_object() && m.contains("id") && m["id"].is_string())
        return m["id"].get<std::string>();
  fail(e.url, "/models lists no model; name one with --remote-model");
}

HttpBenchResult run_http_bench_mode(HttpBenchMode mode, const std::vector<ServiceRequest>& requests,
                                    const HttpBenchSpec& spec) {
  const EndpointUrl e = parse_endpoint_url(spec.endpoint);
  std::vector<std::string> bodies;
  bodies.reserve(requests.size());
  for (const ServiceRequest& r : requests) {
    Json body = remote_request_body(r, spec.model,
                                    RemoteDriver::sample_seed(r.sampling.seed, r.sample_key, 0));
    body["stream"] = true;
    body["stream_options"] = {{"include_usage", true}};
    bodies.push_back(body.dump(-1, ' ', false, Json::error_handler_t::replace));
  }
  const int num_clients =
      mode == HttpBenchMode::Sequential
          ? 1
          : std::max(1, std::min<int>(spec.num_clients, static_cast<int>(requests.size())));
  ModeTally tally;
  std::atomic<size_t> next_row{0};
  const auto client_loop = [&] {
    const auto client = make_client(e, spec.timeout_s);
    for (size_t i = next_row++; i < requests.size(); i = next_row++) {
      Clock::time_point sent = Clock::now();
      StreamOutcome o;
      try {  // an exception must not leave this thread: it would end the process
        o = stream_request(*client, e, bodies[i], remote_request_path(requests[i]), spec, sent);
      } catch (const std::exception& ex) {
        o.error = ex.what();
      }
      tally.add(o, sent, i);
    }
  };
  const auto begin = Clock::now();
  std::vector<std::thread> clients;
  for (int c = 0; c < num_clients; ++c) clients.emplace_back(client_loop);
  for (std::thread& t : clients) t.join();
  HttpBenchResult result = std::move(tally.result);
  result.wall_s = std::chrono::duration<double>(Clock::now() - begin).count();
  result.mode = mode;
  result.num_clients = num_clients;
  std::sort(tally.ttft_ms.begin(), tally.ttft_ms.end());
  std::sort(tally.itl_ms.begin(), tally.itl_ms.end());
  result.ttft_p50_ms = percentile(tally.ttft_ms, 50);
  result.ttft_p99_ms = percentile(tally.ttft_ms, 99);
  result.itl_p50_ms = percentile(tally.itl_ms, 50);
  result.itl_p99_ms = percentile(tally.itl_ms, 99);
  return result;
}

}  // namespace sluice::cli
