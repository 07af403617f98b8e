// The engine: add requests, step, collect outputs. Synchronous and thread-agnostic; a caller
// (CLI loop, GUI worker thread, HTTP server) drives step() in a loop. One step = one scheduler
// iteration + one forward pass over a mixed batch of prefill chunks and decodes + sampling.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine/backend/backend.h"
#include "engine/cache/kv_cache_manager.h"
#include "engine/engine_stats.h"
#include "engine/grammar/grammar_constraints.h"
#include "engine/kv_block_map.h"
#include "engine/model/model_config.h"
#include "engine/runner/model_runner.h"
#include "engine/runner/output_processor.h"
#include "engine/runner/sampler.h"
#include "engine/sched/scheduler.h"
#include "engine/tokenizer/tokenizer.h"

namespace sluice {

// EngineConfig::num_cpu_moe_layers for every layer (--cpu-moe).
inline constexpr int kAllMoeLayers = 1 << 20;

struct EngineConfig {
  int block_size = 16;
  int num_kv_blocks = 0;      // > 0: exactly this many blocks
  size_t kv_cache_bytes = 0;  // > 0 (and no num_kv_blocks): the pool's memory budget
  int max_num_seqs = 256;
  int max_num_batched_tokens = 0;  // 0: the backend's default (512 on the CPU, 2048 on a GPU)
  int max_model_len = 0;           // 0: the model's context
  bool enable_prefix_caching = true;
  bool enable_chunked_prefill = true;
  bool check_invariants = false;  // verify scheduler and block pool after every step
  // GPU backends: the share of device memory the run may use (weights, activations and the KV
  // pool, see engine/memory_plan.h). Unused by the CPU backend.
  double gpu_memory_utilization = 0.90;
  // The KV cache's element type, which the backend is built with (make_backend): Auto, or FP8
  // codes on a GPU (about twice the rows in flight for the same memory).
  KvCacheDType kv_cache_dtype = KvCacheDType::Auto;
  // Mixture-of-experts models on a GPU: the experts of this many leading layers stay in host
  // memory and run on the CPU (--n-cpu-moe N; --cpu-moe: kAllMoeLayers); the backend is built
  // with it (make_backend). Unused by the CPU backend.
  int num_cpu_moe_layers = 0;
  // Backends that can sample on their device do so (only token ids cross back to the host),
  // except in steps where a prompt's n > 1 samples fork from shared logits.
  bool sample_on_device = true;
  // Hybrid models (ModelConfig::is_hybrid): > 0, exactly this many state slots (running
  // sequences and checkpoints together); 0: max_num_seqs + max_state_checkpoints, capped by the
  // budget (plan_state_slots in engine/memory_plan.h).
  int num_state_slots = 0;
  // Hybrid models: prefix checkpoints of the recurrent state kept at most (0: prefix hits are
  // never usable, see StatePool).
  int max_state_checkpoints = 4;
};

// One step's news for a request: tokens sampled and the text they made final.
struct TokenDelta {
  RequestId request_id = 0;
  RequestId group_id = 0;  // the id add_request returned (same for all n samples)
  uint32_t sample_idx = 0;
  int32_t token_id = 0;
  std::string text;            // answer text (the whole output's, without a reasoning format)
  std::string reasoning_text;  // reasoning text (SamplingParams::reasoning)
  // The token's log-probabilities when the request asked for them (sampling_params.logprobs).
  std::optional<TokenLogprobs> logprobs;
};

struct FinishedRequest {
  RequestId request_id = 0;
  RequestId group_id = 0;
  uint32_t sample_idx = 0;
  FinishReason finish_reason = FinishReason::None;
  std::string error;
  int num_prompt_tokens = 0;
  std::vector<int32_t> output_token_ids;
  // The output's length in tokens when its ids are not known (a remote server reports only
  // usage.completion_tokens); -1 when output_token_ids holds the output.
  int num_output_tokens = -1;
  // The answer; the whole output text when the request has no reasoning format.
  std::string output_text;
  // A thinking model's reasoning, apart from the answer (SamplingParams::reasoning), and the
  // tokens inside it (-1 when unknown: a remote server that reports none).
  std::string reasoning_text;
  int num_reasoning_tokens = 0;
  int num_preemptions = 0;
  // Constrained requests: whether the output is a complete sentence of the grammar (false when
  // cut off by max_tokens inside a structure). Unset for unconstrained requests.
  std::optional<bool> is_valid;
  // One per output token when the request asked for log-probabilities (else empty).
  std::vector<TokenLogprobs> output_logprobs;
  double arrival_s = 0.0;  // when it was added, in seconds since the engine was made
  double queue_ms = 0.0;   // arrival to first scheduled
  double ttft_ms = 0.0;    // arrival to first token
  double total_ms = 0.0;   // arrival to finish
};

struct StepResult {
  std::vector<TokenDelta> new_tokens;
  std::vector<FinishedRequest> finished;
  StepStats stats;
};

class Engine {
 public:
  // The model config and tokenizer must outlive the engine; the backend is owned. Sizes the KV
  // pool and allocates it on the backend. Throws Error for invalid limits or too little memory.
  Engine(const ModelConfig& model_config, const Tokenizer& tokenizer,
         std::unique_ptr<Backend> backend, const EngineConfig& config);
  ~Engine();

  // Queues a prompt for params.n samples; returns the id that names the group in outputs.
  // sample_key keys the RNG (for example the input row index), so a row's output does not
  // depend on the rest of the batch. grammar constrains the outputs: the compiled form of
  // params.grammar, compiled off the engine's thread by whoever owns the engine (EngineService,
  // through its GrammarCache); null for free text. Throws Error for invalid sampling parameters
  // and for a params.grammar without its compiled grammar. A request that can never run is
  // reported finished with an error by the next step.
  RequestId add_request(std::vector<int32_t> prompt_token_ids, const SamplingParams& params,
                        uint64_t sample_key, std::shared_ptr<const Grammar> grammar = nullptr);

  // Aborts every sample of the group; they are reported finished (Abort) by the next step.
  void abort(RequestId group_id);

  // Runs one iteration. Precondition: has_unfinished().
  StepResult step();

  bool has_unfinished() const { return scheduler_->has_unfinished() || !pending_finished_.empty(); }

  const EngineConfig& config() const { return config_; }
  int max_model_len() const { return max_model_len_; }
  int num_kv_blocks() const { return kv_cache_manager_->num_blocks(); }
  const KvCacheManager& kv_cache_manager() const { return *kv_cache_manager_; }
  // A hybrid model's state slots; null for a model without recurrent state.
  const StatePool* state_pool() const { return state_pool_.get(); }
  // Returns every block's state and a holder's sample key (for the GUI's block map).
  KvBlockMap kv_block_map() const;
  const Scheduler& scheduler() const { return *scheduler_; }
  Backend& backend() { return *backend_; }
  const GrammarConstraints& grammar_constraints() const { return grammar_constraints_; }
  const Backend& backend() const { return *backend_; }

 private:
  // Throws Error naming the option that sized the pool when num_blocks blocks need more host
  // memory than the machine has available.
  void check_kv_pool_fits_host_memory(int num_blocks, size_t block_bytes) const;
  void sample_step(const SchedulerOutput& step, RunnerOutput& runner_output, StepResult& result);
  // Fills sample_rows_ for a step the backend can sample on its device; leaves them empty when
  // the host samples this step.
  void prepare_device_sampling(const SchedulerOutput& step);
  bool is_fork_point(const Request& request);
  // raw_logits: the step's logits before any change, when the request wants log-probabilities
  // (else empty).
  void fork_samples(Request& parent, std::span<const float> logits,
                    std::span<const float> raw_logits, StepResult& result);
  Request& add_fork_child(Request& parent, uint32_t sample_idx);
  void accept_device_rows(Request& request, RunnerOutput& out, size_t first_row, int count,
                          StepResult& result);
  // Appends a token sampled on the host: its log-probabilities from raw_logits when the request
  // wants them (raw_logits is empty otherwise).
  void accept_token(Request& request, int32_t token_id, std::span<const float> raw_logits,
                    StepResult& result);
  // Appends a token with its log-probabilities when the request wants them, then what its
  // reasoning asks the engine to write (follow_reasoning).
  void accept_sampled(Request& request, int32_t token_id, std::optional<TokenLogprobs> logprobs,
                      StepResult& result);
  // Appends one token (sampled, or forced when is_forced); returns whether the request goes on.
  bool append_output(Request& request, int32_t token_id, std::optional<TokenLogprobs> logprobs,
                     bool is_forced, StepResult& result);
  // After a token of a request with a reasoning format: writes the closing text when the budget
  // is spent, the separator before a grammar, and starts the grammar once the answer begins.
  void follow_reasoning(Request& request, StepResult& result);
  // The token ids of reasoning_close_text / reasoning_answer_separator (encoded once).
  const std::vector<int32_t>& reasoning_text_ids(ReasoningFormat format, bool close);
  // The request's grammar matcher while its grammar is in force (null before the answer).
  static GrammarMatcher* active_matcher(const Request& request);
  // Finishes the request with Error and the message.
  void fail_request(Request& request, std::string message, StepResult& result);
  void finish(RequestId request_id, FinishReason reason, StepResult& result);
  void collect_finished(RequestId request_id, StepResult& result);
  void fill_stats(const SchedulerOutput& step, double step_ms, StepResult& result);

  const ModelConfig& model_config_;
  const Tokenizer& tokenizer_;
  std::unique_ptr<Backend> backend_;
  EngineConfig config_;
  int max_model_len_ = 0;
  std::unique_ptr<KvCacheManager> kv_cache_manager_;
  std::unique_ptr<StatePool> state_pool_;  // hybrid models only
  std::unique_ptr<Scheduler> scheduler_;
  std::unique_ptr<ModelRunner> runner_;
  OutputProcessor output_processor_;
  Sampler sampler_;
  GrammarConstraints grammar_constraints_;
  std::vector<float> logits_copy_;
  std::vector<float> raw_logits_;       // a row's logits kept for its log-probabilities
  std::vector<SampleRow> sample_rows_;  // reused every step
  std::vector<int> sample_row_counts_;  // device rows per sampling request (n at a fork, else 1)
  // The token masks of the step's constrained rows, which the backend asks for while its device
  // runs the forward pass.
  class StepMasks final : public TokenMaskSource {
   public:
    explicit StepMasks(GrammarConstraints& constraints) : constraints_(constraints) {}
    size_t fill(size_t row, std::span<uint32_t> words) override {
      return constraints_.fill_mask(*matchers[row], words);
    }
    std::vector<GrammarMatcher*> matchers;  // [sample row], null where unconstrained

   private:
    GrammarConstraints& constraints_;
  };
  StepMasks step_masks_{grammar_constraints_};
  RunnerOutput runner_output_;  // reused every step

  RequestId next_request_id_ = 1;
  std::unordered_map<RequestId, RequestId> group_of_;  // request id -> group id
  std::unordered_map<RequestId, std::vector<RequestId>> group_members_;
  std::vector<RequestId> pending_finished_;  // aborted between steps, reported by the next
  // reasoning_text_ids by (format, close).
  std::map<std::pair<ReasoningFormat, bool>, std::vector<int32_t>> reasoning_text_ids_;

  std::chrono::steady_clock::time_point created_time_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point start_time_{};
  int64_t step_index_ = 0;
  int64_t total_prompt_tokens_ = 0;
  int64_t total_generation_tokens_ = 0;
  int peak_kv_blocks_used_ = 0;
  struct WindowEntry {
    double step_ms;
    int prompt_tokens;
    int generation_tokens;
  };
  std::deque<WindowEntry> rate_window_;
  double window_ms_ = 0.0;
  int64_t window_prompt_tokens_ = 0;
  int64_t window_generation_tokens_ = 0;
};

// Returns config.max_num_batched_tokens, or when it is 0 the backend's default.
int resolve_max_num_batched_tokens(const EngineConfig& config, const Backend& backend);

// Returns the KV pool size in blocks for a config: num_kv_blocks if set, else the budget
// divided by the block size in bytes, else enough for max_num_seqs requests of max_model_len
// tokens capped at default_budget_bytes.
int plan_num_kv_blocks(const EngineConfig& config, size_t block_bytes, int max_model_len,
                       size_t default_budget_bytes);

}  // namespace sluice
