// What a client submits generation requests to: the local EngineService, or a RemoteDriver
// (app/remote/) that sends them to OpenAI-compatible servers. Either gives back a RequestHandle
// whose stream ends with one FinishedRequest per sample, so a job does not care where its
// tokens come from. Implementations are thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/chat_message.h"
#include "engine/core/error.h"
#include "engine/grammar/grammar_source.h"
#include "engine/kv_block_map.h"
#include "engine/sched/sampling_params.h"
#include "engine/service/request_stream.h"
#include "engine/service/service_metrics.h"

namespace sluice {

// Thrown by submit when the waiting queue is full (the server answers 503).
class QueueFull : public Error {
 public:
  explicit QueueFull(int max_num_waiting)
      : Error(str_cat("the engine's queue is full (", max_num_waiting,
                      " requests waiting); try again later")) {}
};

// Thrown by submit when the request's grammar source (sampling.grammar) does not compile; the
// message names the source (GrammarSource::name) and what is at fault. The server answers 400
// naming the parameter it came from; a job records the row whose own grammar it was as failed.
class InvalidGrammar : public Error {
 public:
  explicit InvalidGrammar(const std::string& message) : Error(message) {}
};

// One request as every RequestService takes it. Its grammar is a source (sampling.grammar), never
// a compiled grammar: the service that runs it compiles it (EngineService, through one cache) or
// forwards it (RemoteDriver, as response_format or structured_outputs).
struct ServiceRequest {
  std::vector<int32_t> prompt_token_ids;
  SamplingParams sampling;
  uint64_t sample_key = 0;    // keys the RNG, as in Engine::add_request
  bool stream_tokens = true;  // false: only the FinishedRequest events are delivered
  // For a service that takes text (a remote server, which tokenizes and applies its own chat
  // template): the conversation, sent as chat messages when is_chat, else prompt_text as a
  // plain completion. The local engine runs prompt_token_ids and ignores these.
  Conversation messages;
  std::string prompt_text;
  bool is_chat = false;
  // A batch line's own "seed": a remote server gets it as it is for the first sample (the same
  // answer as the line sent to that server directly), and seeds mixed from it for the others.
  // The local engine keys its RNG with sampling.seed either way.
  std::optional<int64_t> exact_seed;
};

// A client's view of a submitted request. Aborts the request when destroyed before it finished,
// and stops its on_event callback first (destroy it without holding a lock that callback takes).
class RequestHandle {
 public:
  explicit RequestHandle(std::shared_ptr<RequestStream> stream) : stream_(std::move(stream)) {}
  RequestHandle(const RequestHandle&) = delete;
  RequestHandle& operator=(const RequestHandle&) = delete;
  ~RequestHandle();

  RequestStream& stream() { return *stream_; }
  // Asks the service to abort every sample; they finish with FinishReason::Abort (the local
  // engine between steps, freeing their KV blocks).
  void abort() { stream_->request_abort(); }

 private:
  std::shared_ptr<RequestStream> stream_;
};

class RequestService {
 public:
  virtual ~RequestService() = default;

  // Queues a request and returns its handle. on_event (may be empty) runs on the service's
  // thread after each event for this request; it must be cheap and must not call submit.
  // Throws InvalidGrammar for a grammar source that does not compile (checked on the calling
  // thread), Error for other invalid requests, QueueFull past the service's cap.
  virtual std::unique_ptr<RequestHandle> submit(ServiceRequest request,
                                                std::function<void()> on_event = {}) = 0;
  // Checks a grammar source as submit would, on the calling thread: a local service compiles it
  // (keeping it for the requests to come), a remote one checks what it sends. Returns what the
  // compile ignored or dropped (Grammar::notes(); none from a remote service, whose servers
  // compile it their own way). Throws InvalidGrammar naming the source and what is at fault.
  virtual std::vector<std::string> check_grammar(const GrammarSource& source) = 0;
  // Returns a snapshot of the counters, gauges and the latest StepStats.
  virtual ServiceMetrics metrics() const = 0;
  // Returns what runs the requests, in words: the backend ("cpu", "cuda:0 NVIDIA ...: bf16 ...")
  // or the remote endpoints and model.
  virtual std::string describe() const = 0;
  // Returns the KV block map of the engine that runs the requests, when this process sees it
  // (empty for remote servers).
  virtual KvBlockMap kv_block_map() const { return {}; }
  // Increases whenever there is a new latest StepStats (a step run, a remote request answered).
  virtual int64_t num_steps() const = 0;
  // The longest prompt plus output a request may have; 0 when the service cannot tell (a remote
  // server checks it itself).
  virtual int max_model_len() const = 0;
  // Seconds since the service started: the clock of FinishedRequest::arrival_s.
  virtual double seconds_since_start() const = 0;
};

}  // namespace sluice
