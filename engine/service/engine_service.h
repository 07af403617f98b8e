// The engine service: owns a loaded model and one Engine, and steps it on its own thread while
// there is work (the thread sleeps when idle). Clients on any thread — a dataset job, "run this
// row alone", HTTP requests — submit requests and get a RequestHandle: a stream of token deltas
// and one final result per sample, and abort(). Every client shares the one engine and its KV
// pool, so requests from different clients batch together. A bounded queue of requests that are
// not yet running gives backpressure: submit past the cap throws QueueFull. A request carries its
// grammar's source; submit compiles it through the service's GrammarCache on the caller's thread
// (an HTTP handler's, a job's; never the engine's), so requests with the same source share one
// compiled grammar and its cached masks, and a source that does not compile is refused to its
// submitter.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "engine/core/error.h"
#include "engine/engine.h"
#include "engine/grammar/grammar_cache.h"
#include "engine/model_session.h"
#include "engine/service/request_service.h"
#include "engine/service/request_stream.h"
#include "engine/service/service_metrics.h"

namespace sluice {

struct ServiceConfig {
  EngineConfig engine;
  // Requests submitted and not yet running (the service's queue and the scheduler's waiting
  // list) at most; submit past it throws QueueFull.
  int max_num_waiting = 4096;
  // Where the requests' grammars are compiled and kept; null: the service makes its own. A cache
  // may be shared (ModelHost lends one to every service it builds, and to the checks made before
  // a run), since a compiled grammar does not depend on the model.
  std::shared_ptr<GrammarCache> grammars;
};

// The grammar cache a service makes when its config gives none: as many sources as a job's rows
// with schemas of their own commonly use at once.
inline constexpr size_t kServiceGrammarCacheCapacity = 256;

class EngineService final : public RequestService {
 public:
  // Builds the engine over the session's model with the given backend and starts the thread.
  // Throws Error as Engine's constructor does.
  EngineService(std::shared_ptr<const ModelSession> session, std::unique_ptr<Backend> backend,
                const ServiceConfig& config);
  // Aborts everything in flight, wakes every waiting client (their streams end with
  // FinishReason::Abort) and joins the thread.
  ~EngineService();
  EngineService(const EngineService&) = delete;
  EngineService& operator=(const EngineService&) = delete;

  // Queues a request and returns its handle. on_event (may be empty) runs on the service's
  // thread after each event for this request; it must be cheap and must not call submit.
  // Compiles request.sampling.grammar (through grammars()) first, on the calling thread. Throws
  // InvalidGrammar for a grammar source that does not compile, Error for invalid sampling
  // parameters or token ids, QueueFull past the cap.
  std::unique_ptr<RequestHandle> submit(ServiceRequest request,
                                        std::function<void()> on_event = {}) override;

  // Compiles source through grammars(), as submit does. Throws InvalidGrammar.
  std::vector<std::string> check_grammar(const GrammarSource& source) override {
    return compile(source)->notes();
  }
  // Returns a snapshot of the counters, gauges and the latest StepStats.
  ServiceMetrics metrics() const override;
  // Returns the KV block map published after a recent step (for the GUI); asks the thread to
  // publish a fresh one after its next step. The step after which the engine has nothing left
  // always publishes one, before its requests' last events: a client that has heard every
  // request end reads the pool as the run left it.
  KvBlockMap kv_block_map() const override;
  // Steps run since the service started (clients use it to notice new StepStats).
  int64_t num_steps() const override;

  const ModelSession& session() const { return *session_; }
  std::shared_ptr<const ModelSession> shared_session() const { return session_; }
  const ServiceConfig& config() const { return config_; }
  // The cache the requests' grammars are compiled through (thread-safe).
  GrammarCache& grammars() const { return *grammars_; }
  int max_model_len() const override { return max_model_len_; }
  const std::string& backend_description() const { return backend_description_; }
  // The backend, in words (backend_description()).
  std::string describe() const override { return backend_description_; }
  // Seconds since the engine was made: the clock of FinishedRequest::arrival_s.
  double seconds_since_start() const override;

 private:
  struct Incoming {
    ServiceRequest request;
    std::shared_ptr<const Grammar> grammar;  // request.sampling.grammar compiled, or null
    std::shared_ptr<RequestStream> stream;
    std::chrono::steady_clock::time_point submit_time;
  };
  struct Active;

  // Returns source compiled through grammars_; throws InvalidGrammar when it does not compile.
  std::shared_ptr<const Grammar> compile(const GrammarSource& source);
  void loop();
  // After a failed step the engine is never stepped again: its state is unknown.
  bool has_engine_work() const { return !is_engine_failed_ && engine_->has_unfinished(); }
  void admit(std::vector<Incoming>& incoming);
  void forward_aborts();
  void dispatch(StepResult& result);
  void fail_all(const std::string& error);
  void end_stream(RequestStream& stream, FinishReason reason, const std::string& error,
                  int num_prompt_tokens);
  // Publishes the metrics (and stats, when a step ran) and, when a client asked for one since
  // the last or fresh_map is set, a new KV block map.
  void publish(const StepStats* stats, bool fresh_map = false);

  const std::shared_ptr<const ModelSession> session_;
  const ServiceConfig config_;
  const std::shared_ptr<GrammarCache> grammars_;
  std::unique_ptr<Engine> engine_;  // touched by the service's thread only, after construction
  int max_model_len_ = 0;
  std::string backend_description_;
  std::chrono::steady_clock::time_point start_time_;  // just before the engine was made
  std::unordered_map<RequestId, std::unique_ptr<Active>> active_;  // service thread only
  bool is_engine_failed_ = false;                                  // service thread only

  mutable std::mutex mutex_;  // guards everything below
  std::condition_variable wake_;
  std::deque<Incoming> incoming_;
  int num_engine_waiting_ = 0;  // the scheduler's waiting list as of the last look
  bool is_stopping_ = false;
  std::string failure_;  // set when a step threw: every later request finishes with it
  ServiceMetrics metrics_;
  KvBlockMap kv_block_map_;
  mutable bool is_kv_block_map_wanted_ = true;
  int64_t num_steps_ = 0;

  std::thread thread_;  // last: starts once everything above is built
};

}  // namespace sluice
