// RemoteDriver: a RequestService over OpenAI-compatible servers (vLLM, SGLang, llama.cpp's
// server, `sluice serve`), so a dataset job runs against a serving cluster exactly as it runs
// on the local engine. Each sample of a request is one HTTP request (n = 1, its own seed), sent
// by one of `concurrency` worker threads to the least busy endpoint in the rotation
// (EndpointRotation) within the rate limits (RateLimiter). Connection errors, timeouts, 408, 409,
// 429, 5xx and malformed answers are retried with exponential backoff and jitter (a Retry-After
// is honoured); other 4xx answers (a bad request, a prompt too long for the server) fail the
// sample at once with the server's message. A sample that keeps failing finishes with
// FinishReason::Error naming the endpoint and the last error, so a job records the row as
// failed — never lost. abort() (or dropping the handle) cuts an in-flight request.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "app/remote/endpoint_rotation.h"
#include "app/remote/rate_limiter.h"
#include "app/remote/remote_spec.h"
#include "app/remote/remote_throughput.h"
#include "engine/service/request_service.h"

namespace httplib {
class Client;
}

namespace sluice {

// A base URL split for the HTTP client: "http://host:8000" and "/v1".
struct EndpointUrl {
  std::string url;          // as given, without a trailing slash
  std::string scheme_host;  // "http://host:8000"
  std::string base_path;    // "/v1" (may be empty)
};
// Throws Error naming the URL when it is not http(s)://host[:port][/path].
EndpointUrl parse_endpoint_url(const std::string& url);

class RemoteDriver final : public RequestService {
 public:
  // Checks every endpoint (GET <base>/models) and picks the model: spec.model, which an endpoint
  // that answers must list, or else the one model every endpoint serves. An endpoint that does
  // not answer starts out of the rotation (and is probed later); one that refuses the key, or
  // no endpoint answering, is an Error naming it. on_note (may be empty; called from worker
  // threads, must be thread-safe) hears about endpoints leaving and rejoining the rotation.
  // The API key is read from the environment variable spec.api_key_env.
  RemoteDriver(const RemoteSpec& spec, std::function<void(const std::string&)> on_note = {});
  ~RemoteDriver() override;
  RemoteDriver(const RemoteDriver&) = delete;
  RemoteDriver& operator=(const RemoteDriver&) = delete;

  // ServiceRequest: messages (is_chat) or prompt_text, sampling (n samples, each its own HTTP
  // request; its grammar source sent as response_format or structured_outputs), sample_key (keys
  // each sample's seed with sampling.seed, so a rerun of the row sends the same seeds). Throws
  // InvalidGrammar for a JSON Schema source that is not JSON (the servers compile the rest).
  std::unique_ptr<RequestHandle> submit(ServiceRequest request,
                                        std::function<void()> on_event = {}) override;
  // Checks what would be sent for source: a JSON Schema must be JSON (the servers compile it).
  // Throws InvalidGrammar.
  std::vector<std::string> check_grammar(const GrammarSource& source) override;
  ServiceMetrics metrics() const override;
  int64_t num_steps() const override;
  int max_model_len() const override { return 0; }  // the servers check prompts themselves
  double seconds_since_start() const override;

  const std::string& model() const { return model_; }
  const std::vector<EndpointUrl>& endpoints() const { return endpoints_; }
  // "2 endpoints (http://a:8000/v1, http://b:8000/v1), model m, 16 in flight at most"
  std::string describe() const override;

  // The seed a sample is sent with: the job's seed, the row's key and the sample's index mixed.
  static uint64_t sample_seed(uint64_t seed, uint64_t sample_key, uint32_t sample_idx);

 private:
  struct Request;
  struct Attempt;
  struct Worker;
  using Clock = std::chrono::steady_clock;

  void check_endpoints(const RemoteSpec& spec);
  void work(Worker& worker);
  void watch();
  // Under mutex_: the next attempt that may start now, with its endpoint; or how long to wait.
  std::optional<Attempt> next_attempt(std::unique_lock<std::mutex>& lock);
  struct Sent;
  // Sends an attempt and ends it as its answer says. Called with mutex_ not held.
  void run_attempt(Worker& worker, Attempt attempt);
  // run_attempt()'s steps. send: the HTTP request (no lock held); the others end the attempt as
  // what came back says (mutex_ held): retried, finished with an answer, or failed.
  httplib::Client& client_for(Worker& worker, size_t endpoint) const;
  void send(Worker& worker, const Attempt& attempt, Sent& sent);
  void on_connection_error(Attempt attempt, const Sent& sent, Clock::time_point now);
  void on_answer(Attempt attempt, const Sent& sent, Clock::time_point now);
  void count_answer(const FinishedRequest& f, double ms_since_submit, double wire_s);
  void on_refusal(Attempt attempt, const Sent& sent, Clock::time_point now);
  void finish_sample(Request& request, uint32_t sample_idx, FinishedRequest finished);
  void retry_or_fail(Attempt attempt, const std::string& error,
                     std::optional<double> retry_after_s);
  void note(const std::string& text) const;

  RemoteSpec spec_;
  std::vector<EndpointUrl> endpoints_;
  std::string api_key_;
  std::string model_;
  std::function<void(const std::string&)> on_note_;
  const Clock::time_point start_time_;

  mutable std::mutex mutex_;  // guards everything below
  std::condition_variable wake_;
  std::multimap<Clock::time_point, Attempt> queue_;  // by the time each may start
  EndpointRotation rotation_;
  RateLimiter limiter_;
  std::mt19937_64 jitter_;
  bool is_stopping_ = false;
  ServiceMetrics metrics_;
  int64_t num_answers_ = 0;
  RemoteThroughput throughput_;

  std::vector<std::unique_ptr<Worker>> workers_;  // last: their threads start once all is built
  std::thread watcher_;
};

}  // namespace sluice
