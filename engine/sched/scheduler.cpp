#include "engine/sched/scheduler.h"

#include "engine/core/error.h"

#include <algorithm>
#include <cassert>

namespace sluice {

Scheduler::Scheduler(const SchedulerConfig& config, KvCacheManager& kv_cache_manager,
                     StatePool* state_pool)
    : config_(config), kv_cache_manager_(kv_cache_manager), state_pool_(state_pool) {
  if (config.max_num_seqs < 1) fail("scheduler: max_num_seqs must be at least 1");
  if (config.max_num_batched_tokens < 1)
    fail("scheduler: max_num_batched_tokens must be at least 1");
  if (config.max_model_len < 1) fail("scheduler: max_model_len must be at least 1");
}

bool Scheduler::add_request(std::unique_ptr<Request> request) {
  if (request == nullptr) fail("scheduler: add_request() got no request");
  const RequestId request_id = request->request_id;
  if (requests_.contains(request_id)) fail("scheduler: duplicate request id ", request_id);
  if (request->num_prompt_tokens != request->num_tokens()) {
    fail("scheduler: request ", request_id, " must arrive with its prompt only (",
         request->num_prompt_tokens, " prompt tokens, ", request->num_tokens(), " token ids)");
  }
  Request& added = *request;
  requests_.emplace(request_id, std::move(request));
  added.num_computed_tokens = 0;
  added.finish_reason = FinishReason::None;
  added.error = rejection_error(added);
  if (!added.error.empty()) {
    added.state = RequestState::Finished;
    added.finish_reason = FinishReason::Error;
    ++num_finished_;
    rejected_ids_.push_back(request_id);
    return false;
  }
  added.state = RequestState::Waiting;
  waiting_.push_back(&added);
  return true;
}

std::string Scheduler::rejection_error(const Request& request) const {
  const int num_tokens = request.num_tokens();
  const RequestId request_id = request.request_id;
  if (num_tokens == 0) return str_cat("request ", request_id, " has an empty prompt");
  if (num_tokens >= config_.max_model_len) {
    return str_cat("request ", request_id, ": the prompt has ", num_tokens,
                   " tokens but max_model_len is ", config_.max_model_len,
                   ", which leaves no room for an output token");
  }
  // A prompt that may be chunked needs only what computing it piece by piece holds at once
  // (less than all of it under a sliding window); otherwise it runs whole.
  const int num_blocks_needed = config_.enable_chunked_prefill
                                    ? kv_cache_manager_.num_blocks_to_compute(num_tokens)
                                    : kv_cache_manager_.num_blocks_for_tokens(num_tokens);
  if (num_blocks_needed > kv_cache_manager_.num_blocks()) {
    return never_fits_error(request, num_tokens, num_blocks_needed);
  }
  if (!config_.enable_chunked_prefill && num_tokens > config_.max_num_batched_tokens) {
    return str_cat("request ", request_id, ": the prompt has ", num_tokens,
                   " tokens, more than max_num_batched_tokens (", config_.max_num_batched_tokens,
                   ") while chunked prefill is off");
  }
  if (request.sampling_params.max_tokens < 1) {
    return str_cat("request ", request_id, ": max_tokens must be at least 1, got ",
                   request.sampling_params.max_tokens);
  }
  return {};
}

std::string Scheduler::never_fits_error(const Request& request, int num_tokens,
                                        int num_blocks) const {
  const int window = kv_cache_manager_.config().sliding_window;
  return str_cat("request ", request.request_id, " needs ", num_blocks, " KV blocks for ",
                 num_tokens, " tokens",
                 window > 0 ? str_cat(" (with a sliding window of ", window, ")") : std::string(),
                 " but the whole pool holds ", kv_cache_manager_.num_blocks(), " blocks of ",
                 kv_cache_manager_.block_size(),
                 " tokens; it can never fit (raise the KV cache budget or lower max_tokens)");
}

bool Scheduler::abort_request(RequestId request_id) {
  Request* request = find_request(request_id);
  if (request == nullptr || request->is_finished()) return false;
  finish(*request, FinishReason::Abort);
  return true;
}

SchedulerOutput Scheduler::schedule() {
  if (has_pending_step_) fail("scheduler: schedule() called again before on_step_done()");
  SchedulerOutput output;
  output.failed_request_ids.swap(rejected_ids_);
  int token_budget = config_.max_num_batched_tokens;
  restart_requests_without_state(output);
  const size_t num_restarted = output.preempted_request_ids.size();
  schedule_running(output, token_budget);
  // A step that had to preempt is short of blocks: admitting more now would only lead to
  // more preemption in the next step.
  if (output.preempted_request_ids.size() == num_restarted) schedule_waiting(output, token_budget);
  output.total_num_scheduled_tokens = config_.max_num_batched_tokens - token_budget;
  std::stable_partition(output.requests.begin(), output.requests.end(),
                        [](const ScheduledRequest& scheduled) { return !scheduled.is_prefill; });
  output.block_copies = kv_cache_manager_.take_block_copies();
  if (state_pool_ != nullptr) output.state_copies = state_pool_->take_copies();
  has_pending_step_ = !output.requests.empty();
#ifndef NDEBUG
  check_invariants();
#endif
  return output;
}

void Scheduler::restart_requests_without_state(SchedulerOutput& output) {
  if (state_pool_ == nullptr) return;
  // A fork's child that found no free slot has no state to go on from: like a preempted
  // request, it is recomputed from the start (or a checkpoint) once a slot is free.
  for (size_t idx = running_.size(); idx-- > 0;) {
    Request& request = *running_[idx];
    if (state_pool_->has_slot(request.request_id)) continue;
    running_.erase(running_.begin() + static_cast<std::ptrdiff_t>(idx));
    reset_for_recompute(request, output);
  }
}

void Scheduler::schedule_running(SchedulerOutput& output, int& token_budget) {
  const size_t max_num_seqs = static_cast<size_t>(config_.max_num_seqs);
  size_t idx = 0;
  while (idx < running_.size() && token_budget > 0 && output.requests.size() < max_num_seqs) {
    Request& request = *running_[idx];
    const int num_pending_tokens = request.num_tokens() - request.num_computed_tokens;
    if (num_pending_tokens <= 0) {
      fail("scheduler: request ", request.request_id, " is running with nothing to compute; ",
           "after a step with needs_sample the engine must append_token() or finish_request()");
    }
    // Running requests always take a piece of what they lack: a chunk of a long prompt, or a
    // preempted request's history resumed in pieces.
    int num_new_tokens = std::min(num_pending_tokens, token_budget);
    // A piece ends where a state checkpoint is due.
    if (request.state_checkpoint_at > request.num_computed_tokens)
      num_new_tokens =
          std::min(num_new_tokens, request.state_checkpoint_at - request.num_computed_tokens);
    if (allocate_or_preempt(request, num_new_tokens, output) != AllocateResult::Allocated) break;
    add_scheduled(request, num_new_tokens, output);
    token_budget -= num_new_tokens;
    ++idx;
  }
}

Scheduler::AllocateResult Scheduler::allocate_or_preempt(Request& request, int& num_new_tokens,
                                                         SchedulerOutput& output) {
  while (!kv_cache_manager_.allocate_slots(request.request_id, num_new_tokens)) {
    // Requests before this one are scheduled already; the victim always comes from behind it,
    // so nothing this step planned loses its blocks.
    Request& victim = *running_.back();
    if (&victim != &request) {
      preempt(victim, output);
      continue;
    }
    if (running_.size() > 1) {
      preempt(request, output);
      return AllocateResult::SelfPreempted;
    }
    // Alone, the request was offered the whole pool: a shorter piece may still fit.
    CachedPrefix no_prefix;
    if (allocate_shorter_piece(request, num_new_tokens, no_prefix, num_new_tokens))
      return AllocateResult::Allocated;
    fail_request(request,
                 never_fits_error(request, request.num_tokens(),
                                  kv_cache_manager_.num_blocks_to_compute(request.num_tokens())),
                 output);
    return AllocateResult::Failed;
  }
  return AllocateResult::Allocated;
}

void Scheduler::schedule_waiting(SchedulerOutput& output, int& token_budget) {
  const size_t max_num_seqs = static_cast<size_t>(config_.max_num_seqs);
  while (!waiting_.empty() && token_budget > 0 && running_.size() < max_num_seqs &&
         output.requests.size() < max_num_seqs) {
    Request& request = *waiting_.front();
    // Hybrid models: a sequence runs only with a state slot; FCFS waits for one as for blocks.
    if (state_pool_ != nullptr && !state_pool_->can_acquire()) break;
    CachedPrefix prefix = kv_cache_manager_.find_cached_prefix(request.token_ids);
    // The flag is about prompts; a preempted request's longer history may only fit in pieces.
    const bool may_chunk = config_.enable_chunked_prefill || request.num_preemptions > 0;
    const int checkpoint_at = cut_prefix_to_checkpoint(request, prefix, may_chunk);
    const int num_pending_tokens = request.num_tokens() - prefix.num_tokens;
    if (!may_chunk && num_pending_tokens > token_budget) break;
    int num_new_tokens = std::min(num_pending_tokens, token_budget);
    if (checkpoint_at > 0)
      num_new_tokens = std::min(num_new_tokens, checkpoint_at - prefix.num_tokens);
    if (!kv_cache_manager_.allocate_slots(request.request_id, num_new_tokens, prefix)) {
      // Waiting requests never preempt: blocks come back as running requests finish.
      if (!running_.empty()) break;
      // Nothing holds a block, so the whole pool was on offer: a shorter piece may still fit
      // when the request may run in pieces; otherwise it can never fit.
      if (!may_chunk ||
          !allocate_shorter_piece(request, std::min(request.num_tokens(), token_budget), prefix,
                                  num_new_tokens)) {
        const int num_tokens = request.num_tokens();
        fail_request(
            request,
            never_fits_error(request, num_tokens,
                             may_chunk ? kv_cache_manager_.num_blocks_to_compute(num_tokens)
                                       : kv_cache_manager_.num_blocks_for_tokens(num_tokens)),
            output);
        continue;
      }
    }
    waiting_.pop_front();
    running_.push_back(&request);
    request.state = RequestState::Running;
    request.num_computed_tokens = prefix.num_tokens;
    if (state_pool_ != nullptr) start_state(request, prefix, checkpoint_at);
    add_scheduled(request, num_new_tokens, output);
    token_budget -= num_new_tokens;
  }
}

bool Scheduler::allocate_shorter_piece(const Request& request, int num_tokens_without_prefix,
                                       CachedPrefix& prefix, int& num_new_tokens) {
  const RequestId request_id = request.request_id;
  // Pieces help only a request that can hold what computing all its tokens needs at once: with
  // a sliding window that can be less than the whole pool holds; without one it is all of them.
  if (kv_cache_manager_.num_blocks_to_compute(request.num_tokens()) >
      kv_cache_manager_.num_blocks())
    return false;
  int num_fitting = kv_cache_manager_.num_new_tokens_that_fit(request_id, num_new_tokens, prefix);
  if (num_fitting == 0 && !prefix.block_ids.empty()) {
    // The hit's own blocks are too many to hold at once (a long prefix under a sliding
    // window): start from scratch instead.
    prefix = CachedPrefix{.num_query_tokens = prefix.num_query_tokens};
    num_new_tokens = num_tokens_without_prefix;
    num_fitting = kv_cache_manager_.num_new_tokens_that_fit(request_id, num_new_tokens, prefix);
  }
  if (num_fitting == 0 || !kv_cache_manager_.allocate_slots(request_id, num_fitting, prefix))
    return false;
  num_new_tokens = num_fitting;
  return true;
}

int Scheduler::cut_prefix_to_checkpoint(const Request& request, CachedPrefix& prefix,
                                        bool may_chunk) const {
  if (state_pool_ == nullptr) return 0;
  const int block_size = kv_cache_manager_.block_size();
  const int num_hit_blocks = static_cast<int>(prefix.block_ids.size());
  int num_blocks = state_pool_->find_checkpoint(prefix.block_hashes, request.token_ids, block_size);
  // The request's own slot must not come from evicting the checkpoint it starts from.
  if (num_blocks > 0 &&
      !state_pool_->can_acquire(true, prefix.block_hashes[static_cast<size_t>(num_blocks - 1)]))
    num_blocks = 0;
  prefix.truncate(num_blocks, block_size);
  const bool may_save = may_chunk && state_pool_->max_checkpoints() > 0;
  return may_save && num_hit_blocks > num_blocks ? num_hit_blocks * block_size : 0;
}

void Scheduler::start_state(Request& request, const CachedPrefix& prefix, int checkpoint_at) {
  // A prefix cut to a checkpoint ends at it; a prefix dropped (too many blocks) is empty.
  const bool has_checkpoint = prefix.num_tokens > 0;
  const uint64_t hash = has_checkpoint ? prefix.block_hashes.back() : 0;
  state_pool_->acquire(request.request_id, has_checkpoint, hash);
  if (has_checkpoint) state_pool_->restore_checkpoint(request.request_id, hash);
  request.state_checkpoint_at = checkpoint_at;
}

void Scheduler::save_state_checkpoint(Request& request) {
  const int num_tokens = request.state_checkpoint_at;
  request.state_checkpoint_at = 0;
  const std::span<const uint64_t> hashes = kv_cache_manager_.block_hashes(request.request_id);
  const size_t num_blocks = static_cast<size_t>(num_tokens / kv_cache_manager_.block_size());
  // Its pieces end at the checkpoint, so the request stands exactly there, its blocks hashed.
  if (request.num_computed_tokens != num_tokens || num_blocks == 0 || hashes.size() < num_blocks)
    return;
  // Without a slot to spare the checkpoint is skipped: later requests recompute the prefix.
  state_pool_->save_checkpoint(
      request.request_id, hashes[num_blocks - 1],
      std::span<const int32_t>(request.token_ids).first(static_cast<size_t>(num_tokens)));
}

void Scheduler::reset_for_recompute(Request& request, SchedulerOutput& output) {
  kv_cache_manager_.free(request.request_id);
  if (state_pool_ != nullptr) state_pool_->release(request.request_id);
  request.state = RequestState::Preempted;
  request.num_computed_tokens = 0;
  request.state_checkpoint_at = 0;
  ++request.num_preemptions;
  ++num_preemptions_;
  // At the front: it was admitted before everything still waiting.
  waiting_.push_front(&request);
  output.preempted_request_ids.push_back(request.request_id);
}

void Scheduler::preempt(Request& request, SchedulerOutput& output) {
  // Preemption takes from the back so that the oldest running requests keep making progress.
  assert(running_.back() == &request);
  running_.pop_back();
  reset_for_recompute(request, output);
}

void Scheduler::fail_request(Request& request, const std::string& error, SchedulerOutput& output) {
  request.error = error;
  finish(request, FinishReason::Error);
  output.failed_request_ids.push_back(request.request_id);
}

void Scheduler::finish(Request& request, FinishReason reason) {
  if (request.state == RequestState::Running) {
    running_.erase(std::find(running_.begin(), running_.end(), &request));
  } else {
    waiting_.erase(std::find(waiting_.begin(), waiting_.end(), &request));
  }
  kv_cache_manager_.free(request.request_id);
  if (state_pool_ != nullptr) state_pool_->release(request.request_id);
  request.state = RequestState::Finished;
  request.finish_reason = reason;
  ++num_finished_;
}

void Scheduler::add_scheduled(const Request& request, int num_new_tokens, SchedulerOutput& output) {
  ScheduledRequest scheduled;
  scheduled.request_id = request.request_id;
  scheduled.num_computed_tokens = request.num_computed_tokens;
  scheduled.num_scheduled_tokens = num_new_tokens;
  const auto first = request.token_ids.begin() + request.num_computed_tokens;
  scheduled.token_ids.assign(first, first + num_new_tokens);
  const std::span<const int32_t> block_table = kv_cache_manager_.block_table(request.request_id);
  scheduled.block_table.assign(block_table.begin(), block_table.end());
  const int num_tokens_after = request.num_computed_tokens + num_new_tokens;
  scheduled.needs_sample = num_tokens_after == request.num_tokens();
  // A decode computes just the last sampled token; anything earlier is prompt or history.
  scheduled.is_prefill = request.num_computed_tokens < request.num_prompt_tokens ||
                         request.num_computed_tokens + 1 < request.num_tokens();
  if (state_pool_ != nullptr) scheduled.state_slot = state_pool_->slot_of(request.request_id);
  output.requests.push_back(std::move(scheduled));
}

void Scheduler::on_step_done(const SchedulerOutput& output) {
  if (!has_pending_step_ && !output.requests.empty()) {
    fail("scheduler: on_step_done() without a pending schedule()");
  }
  for (const ScheduledRequest& scheduled : output.requests) {
    Request* request = find_request(scheduled.request_id);
    // Finished or aborted since schedule(): its blocks are gone and nothing is owed.
    if (request == nullptr || request->state != RequestState::Running) continue;
    if (request->num_computed_tokens != scheduled.num_computed_tokens) {
      fail("scheduler: request ", scheduled.request_id, " has ", request->num_computed_tokens,
           " computed tokens but was scheduled at ", scheduled.num_computed_tokens);
    }
    request->num_computed_tokens += scheduled.num_scheduled_tokens;
    kv_cache_manager_.cache_full_blocks(request->request_id, request->token_ids,
                                        request->num_computed_tokens);
    // Hashed first, so that the blocks no later query can see keep their hashes when freed.
    kv_cache_manager_.free_blocks_outside_window(request->request_id, request->num_computed_tokens);
    if (request->state_checkpoint_at > 0 &&
        request->num_computed_tokens >= request->state_checkpoint_at)
      save_state_checkpoint(*request);
  }
  has_pending_step_ = false;
#ifndef NDEBUG
  check_invariants();
#endif
}

void Scheduler::append_token(RequestId request_id, int32_t token_id) {
  Request& request = unfinished_request(request_id, "append a token to");
  if (request.state != RequestState::Running ||
      request.num_computed_tokens != request.num_tokens()) {
    fail("scheduler: request ", request_id, " has no sample due (", to_string(request.state), ", ",
         request.num_computed_tokens, " of ", request.num_tokens(), " tokens computed)");
  }
  if (request.num_tokens() >= config_.max_model_len) {
    fail("scheduler: request ", request_id, " already has max_model_len (", config_.max_model_len,
         ") tokens; it should have finished with length");
  }
  request.token_ids.push_back(token_id);
}

void Scheduler::append_forced_token(RequestId request_id, int32_t token_id) {
  Request& request = unfinished_request(request_id, "append a forced token to");
  if (request.state != RequestState::Running || request.num_computed_tokens >= request.num_tokens())
    fail("scheduler: request ", request_id, " has no sampled token to follow (",
         to_string(request.state), ")");
  if (request.num_tokens() >= config_.max_model_len) {
    fail("scheduler: request ", request_id, " already has max_model_len (", config_.max_model_len,
         ") tokens; it should have finished with length");
  }
  request.token_ids.push_back(token_id);
}

bool Scheduler::has_reached_length(RequestId request_id) const {
  const Request& found = request(request_id);
  return found.num_output_tokens() >= found.sampling_params.max_tokens ||
         found.num_tokens() >= config_.max_model_len;
}

void Scheduler::finish_request(RequestId request_id, FinishReason reason) {
  if (reason == FinishReason::None)
    fail("scheduler: request ", request_id, " finished for no reason");
  finish(unfinished_request(request_id, "finish"), reason);
}

bool Scheduler::can_fork_request(RequestId parent_id, const Request& child) const {
  if (has_pending_step_) return false;
  const Request* parent = find_request(parent_id);
  if (parent == nullptr || parent->state != RequestState::Running) return false;
  if (requests_.contains(child.request_id)) return false;
  if (child.num_prompt_tokens < 1 || child.num_prompt_tokens > child.num_tokens()) return false;
  // The child reads the parent's K/V, so it must agree on every token that K/V came from.
  const int num_shared_tokens = parent->num_computed_tokens;
  if (child.num_tokens() < num_shared_tokens) return false;
  if (!std::equal(parent->token_ids.begin(), parent->token_ids.begin() + num_shared_tokens,
                  child.token_ids.begin())) {
    return false;
  }
  return kv_cache_manager_.can_fork(parent_id, child.request_id);
}

void Scheduler::fork_request(RequestId parent_id, std::unique_ptr<Request> child) {
  if (child == nullptr || !can_fork_request(parent_id, *child)) {
    fail("scheduler: cannot fork request ", parent_id, " into ",
         child ? str_cat(child->request_id) : std::string("nothing"),
         " (needs a running parent, no pending step, a new id and the parent's computed tokens)");
  }
  const Request& parent = *find_request(parent_id);
  kv_cache_manager_.fork(parent_id, child->request_id);
  // Without a free slot the child keeps no state: restart_requests_without_state recomputes it.
  if (state_pool_ != nullptr) state_pool_->fork(parent_id, child->request_id);
  child->num_computed_tokens = parent.num_computed_tokens;
  child->state = RequestState::Running;
  child->finish_reason = FinishReason::None;
  running_.push_back(child.get());
  const RequestId child_id = child->request_id;
  requests_.emplace(child_id, std::move(child));
}

Request* Scheduler::find_request(RequestId request_id) {
  const auto it = requests_.find(request_id);
  return it == requests_.end() ? nullptr : it->second.get();
}

const Request* Scheduler::find_request(RequestId request_id) const {
  const auto it = requests_.find(request_id);
  return it == requests_.end() ? nullptr : it->second.get();
}

const Request& Scheduler::request(RequestId request_id) const {
  const Request* found = find_request(request_id);
  if (found == nullptr) fail("scheduler: unknown request ", request_id);
  return *found;
}

Request& Scheduler::unfinished_request(RequestId request_id, const char* action) {
  Request* found = find_request(request_id);
  if (found == nullptr || found->is_finished()) {
    fail("scheduler: cannot ", action, " request ", request_id, ": ",
         found == nullptr ? "unknown" : "finished already");
  }
  return *found;
}

std::unique_ptr<Request> Scheduler::release_finished(RequestId request_id) {
  const auto it = requests_.find(request_id);
  if (it == requests_.end() || !it->second->is_finished()) {
    fail("scheduler: request ", request_id, " is not a finished request to release");
  }
  std::unique_ptr<Request> released = std::move(it->second);
  requests_.erase(it);
  return released;
}

bool Scheduler::has_unfinished() const {
  return !running_.empty() || !waiting_.empty() || !rejected_ids_.empty();
}

void Scheduler::check_invariants() const {
  for (const Request* request : running_) {
    const RequestId request_id = request->request_id;
    if (request->state != RequestState::Running)
      fail("scheduler: request ", request_id, " is queued as running but ",
           to_string(request->state));
    const int num_allocated_tokens = kv_cache_manager_.num_allocated_tokens(request_id);
    // Slots cover the computed tokens, plus this step's scheduled ones while a step is pending.
    const bool slots_match = has_pending_step_
                                 ? num_allocated_tokens >= request->num_computed_tokens
                                 : num_allocated_tokens == request->num_computed_tokens;
    if (!kv_cache_manager_.has_request(request_id) || !slots_match ||
        num_allocated_tokens > request->num_tokens()) {
      fail("scheduler: running request ", request_id, " has ", num_allocated_tokens, " slots for ",
           request->num_computed_tokens, " computed of ", request->num_tokens(), " tokens");
    }
    if (request->num_tokens() > config_.max_model_len) {
      fail("scheduler: request ", request_id, " exceeds max_model_len");
    }
  }
  for (const Request* request : waiting_) {
    const RequestId request_id = request->request_id;
    if (request->state != RequestState::Waiting && request->state != RequestState::Preempted) {
      fail("scheduler: request ", request_id, " is queued as waiting but ",
           to_string(request->state));
    }
    // Waiting requests hold nothing: they start over (with prefix hits) when admitted.
    if (request->num_computed_tokens != 0 || kv_cache_manager_.has_request(request_id) ||
        (state_pool_ != nullptr && state_pool_->has_slot(request_id))) {
      fail("scheduler: waiting request ", request_id, " holds computed tokens, blocks or state");
    }
  }
  size_t num_unfinished = 0;
  for (const auto& [request_id, request] : requests_) {
    if (!request->is_finished()) ++num_unfinished;
  }
  if (num_unfinished != running_.size() + waiting_.size()) {
    fail("scheduler: ", num_unfinished, " unfinished requests but ", running_.size(),
         " running and ", waiting_.size(), " waiting");
  }
  kv_cache_manager_.check_invariants();
  if (state_pool_ != nullptr) {
    if (state_pool_->num_request_slots() > static_cast<int>(running_.size()))
      fail("scheduler: ", state_pool_->num_request_slots(), " state slots held by ",
           running_.size(), " running requests");
    state_pool_->check_invariants();
  }
}

int64_t Scheduler::num_running_kv_tokens() const {
  int64_t total = 0;
  for (const Request* request : running_)
    total += kv_cache_manager_.num_held_tokens(request->request_id);
  return total;
}

}  // namespace sluice
