#include "engine/service/engine_service.h"

#include <cassert>

#include "engine/runner/sampler.h"

namespace sluice {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

}  // namespace

// A request in the engine, seen from the service's thread.
struct EngineService::Active {
  std::shared_ptr<RequestStream> stream;
  Clock::time_point submit_time;
  bool is_abort_forwarded = false;
  bool has_first_token = false;
  std::vector<Clock::time_point> last_token_time;  // [num_samples]
  uint32_t num_finished = 0;
  bool stream_tokens = true;
};

EngineService::EngineService(std::shared_ptr<const ModelSession> session,
                             std::unique_ptr<Backend> backend, const ServiceConfig& config)
    : session_(std::move(session)),
      config_(config),
      grammars_(config.grammars ? config.grammars
                                : std::make_shared<GrammarCache>(kServiceGrammarCacheCapacity)) {
  if (!session_) fail("engine service: no model session");
  if (config_.max_num_waiting < 1) fail("engine service: max_num_waiting must be at least 1");
  backend_description_ = backend->describe();
  start_time_ = Clock::now();
  engine_ = std::make_unique<Engine>(session_->model->config, *session_->tokenizer,
                                     std::move(backend), config_.engine);
  max_model_len_ = engine_->max_model_len();
  metrics_.num_kv_blocks = engine_->num_kv_blocks();
  kv_block_map_ = engine_->kv_block_map();
  thread_ = std::thread([this] { loop(); });
}

EngineService::~EngineService() {
  {
    const std::lock_guard lock(mutex_);
    is_stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

std::unique_ptr<RequestHandle> EngineService::submit(ServiceRequest request,
                                                     std::function<void()> on_event) {
  validate_sampling_params(request.sampling);
  const int vocab_size = session_->model->config.vocab_size;
  for (const int32_t id : request.prompt_token_ids) {
    if (id < 0 || id >= vocab_size) fail("prompt token id ", id, " is outside the vocabulary");
  }
  // Here, on the submitter's thread and outside the service's lock: a slow compile holds up
  // neither the engine nor other clients.
  std::shared_ptr<const Grammar> grammar;
  if (request.sampling.grammar) grammar = compile(*request.sampling.grammar);
  auto stream = std::make_shared<RequestStream>(static_cast<uint32_t>(request.sampling.n),
                                                std::move(on_event));
  {
    const std::lock_guard lock(mutex_);
    if (is_stopping_) fail("engine service: submit during shutdown");
    if (static_cast<int>(incoming_.size()) + num_engine_waiting_ >= config_.max_num_waiting)
      throw QueueFull(config_.max_num_waiting);
    incoming_.push_back({std::move(request), std::move(grammar), stream, Clock::now()});
    metrics_.num_waiting = static_cast<int>(incoming_.size()) + num_engine_waiting_;
  }
  wake_.notify_all();
  return std::make_unique<RequestHandle>(stream);
}

std::shared_ptr<const Grammar> EngineService::compile(const GrammarSource& source) {
  try {
    return grammars_->get(source);
  } catch (const Error& e) {
    throw InvalidGrammar(e.what());
  }
}

ServiceMetrics EngineService::metrics() const {
  const std::lock_guard lock(mutex_);
  return metrics_;
}

KvBlockMap EngineService::kv_block_map() const {
  const std::lock_guard lock(mutex_);
  is_kv_block_map_wanted_ = true;
  return kv_block_map_;
}

double EngineService::seconds_since_start() const {
  return seconds_between(start_time_, Clock::now());
}

int64_t EngineService::num_steps() const {
  const std::lock_guard lock(mutex_);
  return num_steps_;
}

void EngineService::loop() {
  for (;;) {
    std::vector<Incoming> incoming;
    {
      std::unique_lock lock(mutex_);
      // Sleeps while there is nothing to do: no new request and nothing in the engine.
      wake_.wait(lock, [&] { return is_stopping_ || !incoming_.empty() || has_engine_work(); });
      if (is_stopping_) break;
      incoming.assign(std::make_move_iterator(incoming_.begin()),
                      std::make_move_iterator(incoming_.end()));
      incoming_.clear();
      num_engine_waiting_ += static_cast<int>(incoming.size());
    }
    admit(incoming);
    forward_aborts();
    if (!has_engine_work()) {
      publish(nullptr);
      continue;
    }
    StepResult result;
    try {
      result = engine_->step();
    } catch (const std::exception& e) {
      // The engine's state after a failed step is unknown: every request in it ends with the
      // error, and so does every later one (the service stays up to say so).
      fail_all(str_cat("the engine failed: ", e.what()));
      continue;
    }
    // Before the events, so a client that hears of them sees the step (and, once the engine has
    // nothing left, the map of the pool it left).
    publish(&result.stats, !has_engine_work());
    dispatch(result);
  }
  // Shutting down: every client still waiting hears that its request ended.
  for (auto& [id, active] : active_) end_stream(*active->stream, FinishReason::Abort, "", 0);
  active_.clear();
  std::deque<Incoming> left;
  {
    const std::lock_guard lock(mutex_);
    left.swap(incoming_);
  }
  for (auto& in : left) end_stream(*in.stream, FinishReason::Abort, "", 0);
}

void EngineService::admit(std::vector<Incoming>& incoming) {
  std::string failure;
  {
    const std::lock_guard lock(mutex_);
    failure = failure_;
  }
  for (auto& in : incoming) {
    if (in.stream->is_abort_requested()) {
      end_stream(*in.stream, FinishReason::Abort, "", 0);
      continue;
    }
    if (!failure.empty()) {
      end_stream(*in.stream, FinishReason::Error, failure, 0);
      continue;
    }
    const int num_prompt_tokens = static_cast<int>(in.request.prompt_token_ids.size());
    try {
      const RequestId id =
          engine_->add_request(std::move(in.request.prompt_token_ids), in.request.sampling,
                               in.request.sample_key, std::move(in.grammar));
      auto active = std::make_unique<Active>();
      active->stream = in.stream;
      active->submit_time = in.submit_time;
      active->last_token_time.resize(in.stream->num_samples());
      active->stream_tokens = in.request.stream_tokens;
      active_[id] = std::move(active);
    } catch (const Error& e) {
      end_stream(*in.stream, FinishReason::Error, e.what(), num_prompt_tokens);
    }
  }
}

void EngineService::forward_aborts() {
  for (auto& [id, active] : active_) {
    if (active->is_abort_forwarded || !active->stream->is_abort_requested()) continue;
    engine_->abort(id);
    active->is_abort_forwarded = true;
  }
}

// Counts the step's news into the metrics first, so a client that hears its request finished
// reads metrics that include it; then hands every event to its stream.
void EngineService::dispatch(StepResult& result) {
  const auto now = Clock::now();
  std::vector<double> ttft_s;
  std::vector<double> inter_token_s;
  int64_t num_prompt_tokens = 0;
  int64_t num_generation_tokens = 0;
  int64_t num_requests_finished = 0;
  int64_t num_requests_aborted = 0;
  for (const auto& delta : result.new_tokens) {
    const auto it = active_.find(delta.group_id);
    if (it == active_.end() || delta.token_id < 0) continue;
    Active& active = *it->second;
    auto& last = active.last_token_time[delta.sample_idx];
    if (!active.has_first_token) {
      active.has_first_token = true;
      ttft_s.push_back(seconds_between(active.submit_time, now));
    } else if (last != Clock::time_point{}) {
      inter_token_s.push_back(seconds_between(last, now));
    }
    last = now;
  }
  std::unordered_map<RequestId, uint32_t> num_finishing;  // group id -> samples finishing now
  for (const auto& finished : result.finished) {
    const auto it = active_.find(finished.group_id);
    if (it == active_.end()) continue;
    num_generation_tokens += static_cast<int64_t>(finished.output_token_ids.size());
    if (it->second->num_finished + ++num_finishing[finished.group_id] ==
        it->second->stream->num_samples()) {
      num_prompt_tokens += finished.num_prompt_tokens;
      ++num_requests_finished;
      if (finished.finish_reason == FinishReason::Abort) ++num_requests_aborted;
    }
  }
  {
    const std::lock_guard lock(mutex_);
    for (const double s : ttft_s) metrics_.time_to_first_token.observe(s);
    for (const double s : inter_token_s) metrics_.inter_token_latency.observe(s);
    metrics_.num_prompt_tokens += num_prompt_tokens;
    metrics_.num_generation_tokens += num_generation_tokens;
    metrics_.num_requests_finished += num_requests_finished;
    metrics_.num_requests_aborted += num_requests_aborted;
  }
  for (auto& delta : result.new_tokens) {
    const auto it = active_.find(delta.group_id);
    if (it == active_.end() || !it->second->stream_tokens) continue;
    it->second->stream->push(StreamEvent{.token = std::move(delta)});
  }
  for (auto& finished : result.finished) {
    const auto it = active_.find(finished.group_id);
    if (it == active_.end()) continue;
    Active& active = *it->second;
    const bool is_last = ++active.num_finished == active.stream->num_samples();
    active.stream->push(StreamEvent{.is_finished = true, .finished = std::move(finished)});
    if (is_last) active_.erase(it);
  }
}

void EngineService::fail_all(const std::string& error) {
  is_engine_failed_ = true;
  {
    const std::lock_guard lock(mutex_);
    failure_ = error;
  }
  for (auto& [id, active] : active_) end_stream(*active->stream, FinishReason::Error, error, 0);
  active_.clear();
}

// Ends every sample of a stream that the engine will not report on, counting the request as
// finished first (as dispatch does).
void EngineService::end_stream(RequestStream& stream, FinishReason reason, const std::string& error,
                               int num_prompt_tokens) {
  {
    const std::lock_guard lock(mutex_);
    metrics_.num_prompt_tokens += num_prompt_tokens;
    ++metrics_.num_requests_finished;
    if (reason == FinishReason::Abort) ++metrics_.num_requests_aborted;
  }
  for (const uint32_t sample_idx : stream.unfinished_samples()) {
    StreamEvent event{.is_finished = true};
    event.finished.sample_idx = sample_idx;
    event.finished.finish_reason = reason;
    event.finished.error = error;
    event.finished.num_prompt_tokens = num_prompt_tokens;
    stream.push(std::move(event));
  }
}

void EngineService::publish(const StepStats* stats, bool fresh_map) {
  const bool wants_map = fresh_map || [&] {
    const std::lock_guard lock(mutex_);
    return is_kv_block_map_wanted_;
  }();
  KvBlockMap map;
  if (wants_map) map = engine_->kv_block_map();
  const std::lock_guard lock(mutex_);
  if (stats) {
    metrics_.latest_step = *stats;
    ++num_steps_;
  }
  const Scheduler& scheduler = engine_->scheduler();
  num_engine_waiting_ = scheduler.num_waiting();
  metrics_.num_running = scheduler.num_running();
  metrics_.num_waiting = static_cast<int>(incoming_.size()) + num_engine_waiting_;
  metrics_.num_kv_blocks_used = engine_->kv_cache_manager().num_used_blocks();
  metrics_.num_preemptions = scheduler.num_preemptions();
  if (wants_map) {
    kv_block_map_ = std::move(map);
    is_kv_block_map_wanted_ = false;
  }
}

}  // namespace sluice
