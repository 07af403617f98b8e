// Continuous batching with a token budget, vLLM v1 style. Every request has a target (all its
// known tokens) and num_computed_tokens catching up to it; one step gives each request some
// tokens of a shared budget. That one rule covers prefill, chunked prefill, decode, prefix-cache
// hits (they start a request partway) and recomputation after preemption.
//
// A step, as the engine drives it:
//   1. output = schedule()          running requests first, then waiting ones FCFS
//   2. backend applies output.block_copies, runs the forward pass over output.requests
//   3. on_step_done(output)         advances num_computed_tokens, caches newly full blocks
//   4. for each request with needs_sample: sample, then append_token(); for n > 1, after a
//      parent's first sample, fork_request() each child and append_token() its own sample
//   5. finish_request() each request that stopped; has_reached_length() says which hit
//      max_tokens or max_model_len (finish those with FinishReason::Length)
// and requests listed in output.failed_request_ids are finished already (FinishReason::Error).
//
// Progress: while a request is unfinished, schedule() schedules at least one request or fails
// one (or, on a hybrid model, hands over state copies that held the free slots back), so the
// engine never stalls. Blocks running out preempt the most recently admitted
// running request; a request alone with the whole pool computes a shorter piece that fits, and
// fails only when not even one more token does.
//
// Hybrid models (a StatePool given): every running request also holds a state slot. Admission
// needs a free slot (FCFS waits for one, as for blocks); preemption, finishing and aborting give
// it back; a chunked prefill keeps it from chunk to chunk; a fork's child gets its own slot with
// a copy of the parent's state (SchedulerOutput::state_copies), or, when none is free, starts
// over like a preempted request at the next schedule(). A prefix hit is cut to the longest
// prefix with a state checkpoint, which is copied into the request's slot; when the blocks hit
// further than a checkpoint, the request's chunks end exactly where the hit ends and its state
// there is saved as a new checkpoint after that step (so the 2nd request sharing a prefix saves
// it and the 3rd onward start from it). A step may then schedule nothing but apply the state
// copies whose pins held back the only slots (progress resumes the next step).
//
// Sliding windows (KvCacheConfig::sliding_window): after each step a running request gives back
// the blocks that none of its later queries can see, so a long request holds about a window's
// worth of blocks, and a request is rejected only when its window cannot fit.
#pragma once

#include "engine/cache/kv_cache_manager.h"
#include "engine/cache/state_pool.h"
#include "engine/sched/request.h"
#include "engine/sched/scheduler_output.h"

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace sluice {

struct SchedulerConfig {
  int max_num_seqs = 256;              // requests in one step at most
  int max_num_batched_tokens = 2048;   // tokens in one step at most
  int max_model_len = 0;               // tokens of one request at most (prompt + outputs)
  bool enable_chunked_prefill = true;  // prompts longer than the budget run in pieces
};

class Scheduler {
 public:
  // Throws sluice::Error unless every limit in config is at least 1. state_pool: a hybrid
  // model's state slots (null for a model without recurrent state); it must outlive the
  // scheduler.
  Scheduler(const SchedulerConfig& config, KvCacheManager& kv_cache_manager,
            StatePool* state_pool = nullptr);

  const SchedulerConfig& config() const { return config_; }

  // Queues a request with only its prompt in token_ids. A request that can never run (empty
  // prompt, prompt >= max_model_len, more blocks than the pool, longer than the budget without
  // chunked prefill, max_tokens < 1) is finished at once with FinishReason::Error and its
  // error text; returns false then. Rejections are also listed in the next schedule()'s
  // failed_request_ids. Throws sluice::Error on a duplicate id or inconsistent token counts.
  bool add_request(std::unique_ptr<Request> request);
  // Finishes an unfinished request with FinishReason::Abort and frees its blocks. Returns false
  // when the id is unknown or already finished.
  bool abort_request(RequestId request_id);

  // Plans one step. Precondition: the previous step's on_step_done() was called.
  SchedulerOutput schedule();
  // Accounts for a forward pass over output: num_computed_tokens advance by the scheduled
  // tokens and blocks that became full are registered in the prefix cache. Requests finished
  // or aborted since schedule() are skipped.
  void on_step_done(const SchedulerOutput& output);
  // Appends a sampled token. Precondition: the request is running and caught up
  // (num_computed_tokens == num_tokens(), i.e. a step with needs_sample just finished) and has
  // fewer than max_model_len tokens. Throws sluice::Error otherwise.
  void append_token(RequestId request_id, int32_t token_id);
  // Appends a token the engine writes itself after a sampled one (a reasoning budget's closing
  // text): it is computed by the next step with the request's other pending tokens.
  void append_forced_token(RequestId request_id, int32_t token_id);
  // Returns true when the request has sampling_params.max_tokens outputs or max_model_len
  // tokens: the engine finishes it with FinishReason::Length.
  bool has_reached_length(RequestId request_id) const;
  // Finishes an unfinished request (frees its blocks). Throws sluice::Error when it is unknown
  // or finished already, or reason is None.
  void finish_request(RequestId request_id, FinishReason reason);

  // Returns true when fork_request(parent_id, child) is allowed: no step is pending, the parent
  // is running, the child's id is new and its tokens start with the parent's computed tokens.
  bool can_fork_request(RequestId parent_id, const Request& child) const;
  // Adds child (one of n samples) sharing all of the parent's blocks: state Running, the
  // parent's num_computed_tokens; on a hybrid model a state slot with a copy of the parent's
  // state ordered (without a free slot, the child starts over at the next schedule()). Running
  // requests may then exceed max_num_seqs; each step still schedules at most max_num_seqs. Throws
  // sluice::Error unless can_fork_request().
  void fork_request(RequestId parent_id, std::unique_ptr<Request> child);

  // Returns the request (unfinished or finished and not yet released) or nullptr. The engine
  // may set the timestamps; everything else belongs to the scheduler.
  Request* find_request(RequestId request_id);
  const Request* find_request(RequestId request_id) const;
  // Returns the request. Throws sluice::Error when the id is unknown.
  const Request& request(RequestId request_id) const;
  // Hands a finished request over to the caller and forgets it. Throws sluice::Error unless
  // the request is finished.
  std::unique_ptr<Request> release_finished(RequestId request_id);

  // Returns true while a request is waiting or running, or a rejection is yet to be reported.
  bool has_unfinished() const;
  int num_running() const { return static_cast<int>(running_.size()); }
  int num_waiting() const { return static_cast<int>(waiting_.size()); }
  int64_t num_preemptions() const { return num_preemptions_; }  // since construction
  int64_t num_finished() const { return num_finished_; }        // since construction
  // Returns the KV token slots the running requests hold (a shared block counts per holder;
  // blocks given back outside a sliding window do not count).
  int64_t num_running_kv_tokens() const;
  // The state slots (null for a model without recurrent state).
  const StatePool* state_pool() const { return state_pool_; }

  // Verifies the request queues against the requests' states and block tables, then the KV
  // cache's invariants. Throws sluice::Error naming the violation. Debug builds run it after
  // every schedule() and on_step_done().
  void check_invariants() const;

 private:
  enum class AllocateResult { Allocated, SelfPreempted, Failed };

  std::string rejection_error(const Request& request) const;
  void restart_requests_without_state(SchedulerOutput& output);
  void schedule_running(SchedulerOutput& output, int& token_budget);
  void schedule_waiting(SchedulerOutput& output, int& token_budget);
  // Allocates num_new_tokens for a running request, preempting from the back; alone, it
  // shortens num_new_tokens to what fits.
  AllocateResult allocate_or_preempt(Request& request, int& num_new_tokens,
                                     SchedulerOutput& output);
  // For a request alone in the engine whose piece does not fit: allocates the longest shorter
  // piece that does, with prefix, or without it (then num_tokens_without_prefix tokens at most)
  // when the hit's own blocks are too many. Returns false, allocating nothing, when no token
  // fits; otherwise sets num_new_tokens (and prefix, when dropped).
  bool allocate_shorter_piece(const Request& request, int num_tokens_without_prefix,
                              CachedPrefix& prefix, int& num_new_tokens);
  // Hybrid models: cuts prefix to the longest prefix with a state checkpoint (none when taking
  // a slot would evict that checkpoint) and returns where a new checkpoint is due: the end of
  // the blocks hit when they reach further, when pieces may be cut there (else 0).
  int cut_prefix_to_checkpoint(const Request& request, CachedPrefix& prefix, bool may_chunk) const;
  // Hybrid models: gives an admitted request its slot, restores the checkpoint prefix starts
  // from, and notes where its next checkpoint is due.
  void start_state(Request& request, const CachedPrefix& prefix, int checkpoint_at);
  void save_state_checkpoint(Request& request);
  void reset_for_recompute(Request& request, SchedulerOutput& output);
  void preempt(Request& request, SchedulerOutput& output);
  void fail_request(Request& request, const std::string& error, SchedulerOutput& output);
  void finish(Request& request, FinishReason reason);
  void add_scheduled(const Request& request, int num_new_tokens, SchedulerOutput& output);
  std::string never_fits_error(const Request& request, int num_tokens, int num_blocks) const;
  Request& unfinished_request(RequestId request_id, const char* action);

  SchedulerConfig config_;
  KvCacheManager& kv_cache_manager_;
  StatePool* state_pool_ = nullptr;
  std::unordered_map<RequestId, std::unique_ptr<Request>> requests_;
  std::vector<Request*> running_;        // admission order: the back is preempted first
  std::deque<Request*> waiting_;         // FCFS; preempted requests return to the front
  std::vector<RequestId> rejected_ids_;  // rejected by add_request, reported by schedule()
  bool has_pending_step_ = false;        // schedule() planned work that on_step_done() has not seen
  int64_t num_preemptions_ = 0;
  int64_t num_finished_ = 0;
};

}  // namespace sluice
