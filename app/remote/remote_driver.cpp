#include "app/remote/remote_driver.h"

#include <httplib.h>

#include <algorithm>
#include <cstdlib>
#include <set>

#include "app/remote/http_error_text.h"
#include "app/remote/remote_protocol.h"
#include "engine/core/error.h"

namespace sluice {

namespace {

constexpr auto kWatchInterval = std::chrono::milliseconds(50);
constexpr double kMaxBackoffS = 30.0;
constexpr double kThroughputWindowS = 5.0;

std::string too_long_message(int64_t max_bytes) {
  return str_cat("the answer was longer than ", max_bytes / 1024, " KiB; cut off there");
}

uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

bool is_retryable_status(int status) {
  return status == 408 || status == 409 || status == 429 || status >= 500;
}

// A prompt's tokens guessed from its bytes (about four per token in English) plus its output.
double estimated_tokens(const ServiceRequest& r) {
  size_t bytes = r.prompt_text.size();
  for (const ChatMessage& m : r.messages) bytes += m.content.size();
  return static_cast<double>(bytes) / 4.0 + r.sampling.max_tokens;
}

httplib::Headers auth_headers(const std::string& api_key) {
  httplib::Headers headers;
  if (!api_key.empty()) headers.emplace("Authorization", "Bearer " + api_key);
  return headers;
}

}  // namespace

EndpointUrl parse_endpoint_url(const std::string& url) {
  EndpointUrl e;
  e.url = url;
  while (!e.url.empty() && e.url.back() == '/') e.url.pop_back();
  const size_t scheme_end = e.url.find("://");
  const std::string scheme = scheme_end == std::string::npos ? "" : e.url.substr(0, scheme_end);
  if (scheme != "http" && scheme != "https")
    fail("--endpoint '", url, "' must start with http:// or https://");
  const size_t path_start = e.url.find('/', scheme_end + 3);
  e.scheme_host = e.url.substr(0, path_start);
  e.base_path = path_start == std::string::npos ? "" : e.url.substr(path_start);
  if (e.scheme_host.size() <= scheme_end + 3) fail("--endpoint '", url, "' names no host");
  return e;
}

struct RemoteDriver::Request {
  ServiceRequest request;
  std::shared_ptr<RequestStream> stream;
  double arrival_s = 0.0;
  Clock::time_point submit_time;
  uint32_t num_finished = 0;
};

struct RemoteDriver::Attempt {
  std::shared_ptr<Request> request;
  uint32_t sample_idx = 0;
  int num_tries = 0;  // attempts made before this one
  size_t endpoint = 0;
  std::optional<size_t> last_endpoint;
  double estimated_tokens = 0.0;
};

struct RemoteDriver::Worker {
  std::thread thread;
  std::map<size_t, std::unique_ptr<httplib::Client>> clients;  // by endpoint, this thread's own
  std::mutex mutex;  // guards the fields below, which the watcher reads
  httplib::Client* busy_client = nullptr;
  std::shared_ptr<Request> busy_request;
  Clock::time_point busy_since;
  bool is_timed_out = false;
};

RemoteDriver::RemoteDriver(const RemoteSpec& spec, std::function<void(const std::string&)> on_note)
    : spec_(spec),
      on_note_(std::move(on_note)),
      start_time_(Clock::now()),
      rotation_(spec.endpoints.size()),
      limiter_(spec.requests_per_minute, spec.tokens_per_minute, Clock::now()),
      jitter_(std::random_device{}()),
      throughput_(kThroughputWindowS) {
  check_remote_spec(spec_);
  if (spec_.endpoints.empty()) fail("remote job: no --endpoint given");
  for (const std::string& url : spec_.endpoints) endpoints_.push_back(parse_endpoint_url(url));
  if (!spec_.api_key_env.empty()) {
    const char* key = std::getenv(spec_.api_key_env.c_str());
    if (!key || !*key)
      fail("--api-key-env ", spec_.api_key_env, ": the environment variable is not set");
    api_key_ = key;
  }
  check_endpoints(spec_);
  metrics_.latest_step.max_num_seqs = spec_.concurrency;
  for (int i = 0; i < spec_.concurrency; ++i) workers_.push_back(std::make_unique<Worker>());
  for (auto& w : workers_) w->thread = std::thread([this, worker = w.get()] { work(*worker); });
  watcher_ = std::thread([this] { watch(); });
}

RemoteDriver::~RemoteDriver() {
  {
    const std::lock_guard lock(mutex_);
    is_stopping_ = true;
  }
  wake_.notify_all();
  for (auto& w : workers_) {
    const std::lock_guard lock(w->mutex);
    if (w->busy_client) w->busy_client->stop();
  }
  for (auto& w : workers_) w->thread.join();
  watcher_.join();
  // Whatever never ran ends aborted, so no client waits on it.
  for (auto& [when, attempt] : queue_) {
    FinishedRequest f;
    f.finish_reason = FinishReason::Abort;
    finish_sample(*attempt.request, attempt.sample_idx, std::move(f));
  }
}

void RemoteDriver::check_endpoints(const RemoteSpec& spec) {
  std::vector<std::string> problems;
  std::set<std::string> all_models;
  bool is_any_up = false;
  bool is_one_model_each = true;
  for (size_t i = 0; i < endpoints_.size(); ++i) {
    const EndpointUrl& e = endpoints_[i];
    httplib::Client client(e.scheme_host);
    client.set_connection_timeout(std::chrono::seconds(5));
    client.set_read_timeout(std::chrono::seconds(15));
    std::string body;  // read up to spec.max_answer_bytes, as the completions are
    bool is_too_long = false;
    const auto res = client.Get(
        e.base_path + "/models", auth_headers(api_key_), [&](const char* data, size_t size) {
          if (static_cast<int64_t>(body.size() + size) > spec.max_answer_bytes) {
            is_too_long = true;
            return false;
          }
          body.append(data, size);
          return true;
        });
    if (!res) {
      const std::string why =
          is_too_long ? too_long_message(spec.max_answer_bytes) : http_error_text(res.error());
      problems.push_back(str_cat(e.url, ": ", why));
      note(str_cat(e.url, " did not answer (", why, "); it is out of the rotation until it does"));
      rotation_.take_out(i, Clock::now());
      continue;
    }
    if (res->status == 401 || res->status == 403) {
      fail(e.url, " refused the API key (HTTP ", res->status, ": ", remote_error_message(body), ")",
           spec.api_key_env.empty() ? "; give the key's variable with --api-key-env" : "");
    }
    if (res->status != 200) {
      if (spec.model.empty()) {
        fail(e.url, "/models answered HTTP ", res->status, " (", remote_error_message(body),
             "); give the model's name with --remote-model");
      }
      is_any_up = true;  // it answers; it cannot say what it serves
      continue;
    }
    const auto answer = nlohmann::json::parse(body, nullptr, false);
    std::vector<std::string> models;
    if (answer.is_object() && answer.contains("data") && answer["data"].is_array()) {
      for (const auto& m : answer["data"]) {
        if (m.is_object() && m.contains("id") && m["id"].is_string())
          models.push_back(m["id"].get<std::string>());
      }
    }
    is_any_up = true;
    if (!spec.model.empty() && !models.empty() &&
        std::find(models.begin(), models.end(), spec.model) == models.end())
      fail(e.url, " serves no model '", spec.model, "' (it serves: ", join(models), ")");
    is_one_model_each &= models.size() == 1;
    all_models.insert(models.begin(), models.end());
  }
  if (!is_any_up) fail("no endpoint answered: ", join(problems));
  model_ = spec.model;
  if (model_.empty()) {
    if (!is_one_model_each || all_models.size() != 1) {
      fail("give --remote-model: the endpoints serve ",
           all_models.empty()
               ? "no model they name"
               : join(std::vector<std::string>(all_models.begin(), all_models.end())));
    }
    model_ = *all_models.begin();
  }
}

uint64_t RemoteDriver::sample_seed(uint64_t seed, uint64_t sample_key, uint32_t sample_idx) {
  // 31 bits: every server takes it (some keep seeds in a 32-bit signed integer).
  return mix64(mix64(seed) ^ mix64(sample_key + 1) ^ (uint64_t{sample_idx} << 40)) & 0x7fffffffULL;
}

std::unique_ptr<RequestHandle> RemoteDriver::submit(ServiceRequest request,
                                                    std::function<void()> on_event) {
  if (request.sampling.n < 1) fail("remote request: n must be at least 1");
  if (request.is_chat && request.messages.empty()) fail("remote request: no messages");
  // A schema that is not JSON is refused now, not sent to every endpoint in turn.
  if (request.sampling.grammar) remote_request_body(request, model_, 0);
  auto r = std::make_shared<Request>();
  r->request = std::move(request);
  r->stream = std::make_shared<RequestStream>(static_cast<uint32_t>(r->request.sampling.n),
                                              std::move(on_event));
  r->submit_time = Clock::now();
  r->arrival_s = seconds_since_start();
  auto handle = std::make_unique<RequestHandle>(r->stream);
  {
    const std::lock_guard lock(mutex_);
    if (is_stopping_) fail("remote driver: stopping");
    for (uint32_t i = 0; i < r->stream->num_samples(); ++i) {
      Attempt a;
      a.request = r;
      a.sample_idx = i;
      a.estimated_tokens = estimated_tokens(r->request);
      queue_.emplace(r->submit_time, std::move(a));
      ++metrics_.num_waiting;
    }
  }
  wake_.notify_all();
  return handle;
}

std::vector<std::string> RemoteDriver::check_grammar(const GrammarSource& source) {
  ServiceRequest request;
  request.sampling.grammar = std::make_shared<const GrammarSource>(source);
  remote_request_body(request, model_, 0);
  return {};  // the servers compile it, in their own mode (schema_mode is not sent)
}

std::optional<RemoteDriver::Attempt> RemoteDriver::next_attempt(
    std::unique_lock<std::mutex>& lock) {
  while (!is_stopping_) {
    const auto now = Clock::now();
    if (queue_.empty()) {
      wake_.wait(lock);
      continue;
    }
    const auto first = queue_.begin();
    if (first->first > now) {
      const Clock::time_point until = first->first;  // a copy: the entry may go while we wait
      wake_.wait_until(lock, until);
      continue;
    }
    if (const auto wait = limiter_.wait(now); wait > Clock::duration::zero()) {
      wake_.wait_for(lock, wait);
      continue;
    }
    const auto endpoint = rotation_.pick(now, first->second.last_endpoint);
    if (!endpoint) {
      wake_.wait_until(lock, std::min(rotation_.next_usable(now), now + std::chrono::seconds(1)));
      continue;
    }
    Attempt a = std::move(first->second);
    queue_.erase(first);
    a.endpoint = *endpoint;
    limiter_.take(a.estimated_tokens, now);
    --metrics_.num_waiting;
    ++metrics_.num_running;
    return a;
  }
  return std::nullopt;
}

void RemoteDriver::work(Worker& worker) {
  std::unique_lock lock(mutex_);
  while (auto attempt = next_attempt(lock)) {
    lock.unlock();
    run_attempt(worker, std::move(*attempt));
    lock.lock();
  }
}

// What one attempt's HTTP request came back with.
struct RemoteDriver::Sent {
  std::optional<httplib::Result> result;  // nullopt: not sent (the request was aborted)
  std::string answer;                     // the answer's body, up to spec_.max_answer_bytes
  bool is_too_long = false;
  bool is_timed_out = false;  // the watcher cut it off at --request-timeout
  Clock::time_point started;
};

// One attempt in named steps: send it (no lock held), then, under the lock, end it as what came
// back says: aborted, a connection error (retried), an answer, or a refusal (retried or failed).
void RemoteDriver::run_attempt(Worker& worker, Attempt a) {
  Sent sent;
  sent.started = Clock::now();
  if (!a.request->stream->is_abort_requested()) send(worker, a, sent);
  const auto now = Clock::now();
  std::unique_lock lock(mutex_);
  --metrics_.num_running;
  if (a.request->stream->is_abort_requested() || is_stopping_) {
    rotation_.end_without_outcome(a.endpoint);
    FinishedRequest f;
    f.finish_reason = FinishReason::Abort;
    finish_sample(*a.request, a.sample_idx, std::move(f));
    return;
  }
  if (!*sent.result) {
    on_connection_error(std::move(a), sent, now);
  } else if ((*sent.result)->status == 200) {
    on_answer(std::move(a), sent, now);
  } else {
    on_refusal(std::move(a), sent, now);
  }
}

httplib::Client& RemoteDriver::client_for(Worker& worker, size_t endpoint) const {
  auto& client = worker.clients[endpoint];
  if (!client) {
    const auto timeout = std::chrono::duration<double>(spec_.request_timeout_s);
    client = std::make_unique<httplib::Client>(endpoints_[endpoint].scheme_host);
    client->set_connection_timeout(
        std::min<std::chrono::duration<double>>(timeout, std::chrono::seconds(10)));
    client->set_read_timeout(timeout);
    client->set_write_timeout(timeout);
    client->set_keep_alive(true);
    client->set_tcp_nodelay(true);  // headers and body go out at once, not after a delayed ACK
  }
  return *client;
}

void RemoteDriver::send(Worker& worker, const Attempt& a, Sent& sent) {
  const Request& r = *a.request;
  httplib::Client& client = client_for(worker, a.endpoint);
  const int64_t seed = a.sample_idx == 0 && r.request.exact_seed
                           ? *r.request.exact_seed
                           : static_cast<int64_t>(sample_seed(r.request.sampling.seed,
                                                              r.request.sample_key, a.sample_idx));
  {
    const std::lock_guard lock(worker.mutex);
    worker.busy_client = &client;
    worker.busy_request = a.request;
    worker.busy_since = sent.started;
    worker.is_timed_out = false;
  }
  // The answer is read into sent.answer, up to spec_.max_answer_bytes: httplib would read a body
  // of any length into memory.
  httplib::Request post;
  post.method = "POST";
  post.path = endpoints_[a.endpoint].base_path + remote_request_path(r.request);
  post.headers = auth_headers(api_key_);
  post.headers.emplace("Content-Type", "application/json");
  post.body = remote_request_body(r.request, model_, seed, spec_.reasoning)
                  .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  post.content_receiver = [&](const char* data, size_t size, uint64_t, uint64_t) {
    if (static_cast<int64_t>(sent.answer.size() + size) > spec_.max_answer_bytes) {
      sent.is_too_long = true;
      return false;
    }
    sent.answer.append(data, size);
    return true;
  };
  sent.result.emplace(client.send(post));
  const std::lock_guard lock(worker.mutex);
  worker.busy_client = nullptr;
  worker.busy_request.reset();
  sent.is_timed_out = worker.is_timed_out;
}

void RemoteDriver::on_connection_error(Attempt a, const Sent& sent, Clock::time_point now) {
  const EndpointUrl& e = endpoints_[a.endpoint];
  const std::string error = sent.is_timed_out  ? str_cat("no answer within --request-timeout ",
                                                         spec_.request_timeout_s, " s")
                            : sent.is_too_long ? too_long_message(spec_.max_answer_bytes)
                                               : http_error_text(sent.result->error());
  if (rotation_.fail(a.endpoint, now))
    note(str_cat(e.url, " left the rotation after repeated failures (", error,
                 "); probing it again in ", rotation_.cool_down_s(a.endpoint), " s"));
  retry_or_fail(std::move(a), str_cat(e.url, ": ", error), std::nullopt);
}

void RemoteDriver::on_answer(Attempt a, const Sent& sent, Clock::time_point now) {
  Request& r = *a.request;
  const EndpointUrl& e = endpoints_[a.endpoint];
  FinishedRequest f;
  try {
    f = parse_remote_response(sent.answer, r.request.is_chat);
  } catch (const Error& error) {
    rotation_.fail(a.endpoint, now);
    retry_or_fail(std::move(a), str_cat(e.url, ": ", error.what()), std::nullopt);
    return;
  }
  const bool was_out = !rotation_.is_in_rotation(a.endpoint);
  rotation_.succeed(a.endpoint);
  if (was_out) note(str_cat(e.url, " answers again; back in the rotation"));
  const double actual = f.num_prompt_tokens + std::max(0, f.num_output_tokens);
  limiter_.correct(a.estimated_tokens, actual);
  const double ms_since_submit =
      std::chrono::duration<double, std::milli>(now - r.submit_time).count();
  f.queue_ms = std::chrono::duration<double, std::milli>(sent.started - r.submit_time).count();
  f.ttft_ms = ms_since_submit;  // a whole answer: its first token comes with its last
  f.total_ms = ms_since_submit;
  count_answer(f, ms_since_submit, std::chrono::duration<double>(now - sent.started).count());
  finish_sample(r, a.sample_idx, std::move(f));
}

// The answers' statistics: one "step" per answer, throughput as RemoteThroughput estimates it.
void RemoteDriver::count_answer(const FinishedRequest& f, double ms_since_submit, double wire_s) {
  const double t = seconds_since_start();
  StepStats& s = metrics_.latest_step;
  s.step_index = ++num_answers_;
  s.elapsed_s = t;
  s.step_time_ms = ms_since_submit;
  s.num_generation_tokens = std::max(0, f.num_output_tokens);
  s.total_prompt_tokens += f.num_prompt_tokens;
  s.total_generation_tokens += std::max(0, f.num_output_tokens);
  // This attempt has left num_running already: it was in flight with the others.
  s.generation_tokens_per_s =
      throughput_.add_answer(t, std::max(0, f.num_output_tokens), wire_s, metrics_.num_running + 1);
}

void RemoteDriver::on_refusal(Attempt a, const Sent& sent, Clock::time_point now) {
  const EndpointUrl& e = endpoints_[a.endpoint];
  const httplib::Result& result = *sent.result;
  const int status = result->status;
  const std::string error =
      str_cat(e.url, ": HTTP ", status, ": ", remote_error_message(sent.answer));
  if (!is_retryable_status(status)) {
    rotation_.succeed(a.endpoint);  // it answered; the request is what it refused
    FinishedRequest f;
    f.finish_reason = FinishReason::Error;
    f.error = error;
    finish_sample(*a.request, a.sample_idx, std::move(f));
    return;
  }
  const auto retry_after = result->has_header("Retry-After")
                               ? parse_retry_after(result->get_header_value("Retry-After"),
                                                   std::chrono::system_clock::now())
                               : std::nullopt;
  if (status == 429) {
    rotation_.end_without_outcome(a.endpoint);
  } else if (rotation_.fail(a.endpoint, now)) {
    note(str_cat(e.url, " left the rotation after repeated failures (HTTP ", status,
                 "); probing it again in ", rotation_.cool_down_s(a.endpoint), " s"));
  }
  if (retry_after) {
    rotation_.hold_back(a.endpoint,
                        now + std::chrono::duration_cast<Clock::duration>(
                                  std::chrono::duration<double>(std::min(*retry_after, 600.0))));
  }
  retry_or_fail(std::move(a), error, retry_after);
}

void RemoteDriver::retry_or_fail(Attempt a, const std::string& error,
                                 std::optional<double> retry_after_s) {
  ++a.num_tries;
  if (a.num_tries > spec_.retries) {
    FinishedRequest f;
    f.finish_reason = FinishReason::Error;
    f.error = str_cat(error, " (gave up after ", a.num_tries,
                      a.num_tries == 1 ? " attempt)" : " attempts)");
    finish_sample(*a.request, a.sample_idx, std::move(f));
    return;
  }
  // Full jitter between half and all of 0.25 s, 0.5 s, 1 s, ... 30 s.
  const double cap =
      std::min(kMaxBackoffS, 0.125 * static_cast<double>(1 << std::min(a.num_tries, 10)));
  double delay_s = std::uniform_real_distribution<double>(cap / 2, cap)(jitter_);
  // With a single endpoint its hold already keeps the retry back; with others, a retry there
  // need not wait for this one's Retry-After.
  if (retry_after_s && endpoints_.size() == 1)
    delay_s = std::max(delay_s, std::min(*retry_after_s, 600.0));
  a.last_endpoint = a.endpoint;
  const auto when = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                       std::chrono::duration<double>(delay_s));
  queue_.emplace(when, std::move(a));
  ++metrics_.num_waiting;
  wake_.notify_all();
}

void RemoteDriver::finish_sample(Request& r, uint32_t sample_idx, FinishedRequest f) {
  f.sample_idx = sample_idx;
  f.arrival_s = r.arrival_s;
  if (f.finish_reason == FinishReason::Abort) ++metrics_.num_requests_aborted;
  metrics_.num_generation_tokens += std::max(0, f.num_output_tokens);
  if (r.num_finished == 0) metrics_.num_prompt_tokens += f.num_prompt_tokens;
  if (++r.num_finished == r.stream->num_samples()) {
    ++metrics_.num_requests_finished;
    ++metrics_.latest_step.num_finished;
  }
  metrics_.latest_step.num_running = metrics_.num_running;
  metrics_.latest_step.num_waiting = metrics_.num_waiting;
  metrics_.latest_step.num_scheduled_requests = metrics_.num_running;
  r.stream->push(StreamEvent{.is_finished = true, .token = {}, .finished = std::move(f)});
}

void RemoteDriver::watch() {
  std::unique_lock lock(mutex_);
  while (!is_stopping_) {
    wake_.wait_for(lock, kWatchInterval);
    // Aborted requests that wait (for a retry, a rate limit or a place) end now.
    for (auto it = queue_.begin(); it != queue_.end();) {
      if (!it->second.request->stream->is_abort_requested()) {
        ++it;
        continue;
      }
      FinishedRequest f;
      f.finish_reason = FinishReason::Abort;
      finish_sample(*it->second.request, it->second.sample_idx, std::move(f));
      it = queue_.erase(it);
      --metrics_.num_waiting;
    }
    lock.unlock();
    const auto now = Clock::now();
    const auto timeout = std::chrono::duration<double>(spec_.request_timeout_s);
    for (auto& w : workers_) {
      const std::lock_guard worker_lock(w->mutex);
      if (!w->busy_client) continue;
      const bool is_aborted = w->busy_request->stream->is_abort_requested();
      if (!is_aborted && now - w->busy_since < timeout) continue;
      w->is_timed_out = !is_aborted;
      w->busy_client->stop();  // the attempt's Post returns at once with an error
    }
    lock.lock();
  }
}

ServiceMetrics RemoteDriver::metrics() const {
  const std::lock_guard lock(mutex_);
  ServiceMetrics m = metrics_;
  m.latest_step.num_running = m.num_running;
  m.latest_step.num_waiting = m.num_waiting;
  m.latest_step.num_scheduled_requests = m.num_running;
  return m;
}

int64_t RemoteDriver::num_steps() const {
  const std::lock_guard lock(mutex_);
  return num_answers_;
}

double RemoteDriver::seconds_since_start() const {
  return std::chrono::duration<double>(Clock::now() - start_time_).count();
}

std::string RemoteDriver::describe() const {
  std::vector<std::string> urls;
  for (const EndpointUrl& e : endpoints_) urls.push_back(e.url);
  return str_cat(endpoints_.size(), endpoints_.size() == 1 ? " endpoint (" : " endpoints (",
                 join(urls), "), model ", model_, ", ", spec_.concurrency,
                 " requests in flight at most");
}

void RemoteDriver::note(const std::string& text) const {
  if (on_note_) on_note_(text);
}

}  // namespace sluice
