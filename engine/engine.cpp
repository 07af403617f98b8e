#include "engine/engine.h"

#include <algorithm>
#include <cassert>

#include "engine/cache/block.h"
#include "engine/core/error.h"
#include "engine/core/system_memory.h"
#include "engine/memory_plan.h"
#include "engine/reasoning/reasoning_prompt.h"

namespace sluice {

namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kDefaultKvBudgetBytes = size_t{2} << 30;
constexpr double kRateWindowMs = 1000.0;

double ms_between(Clock::time_point from, Clock::time_point to) {
  if (from == Clock::time_point{} || to == Clock::time_point{}) return 0.0;
  return std::chrono::duration<double, std::milli>(to - from).count();
}

std::vector<int32_t> eos_ids(const ModelConfig& model_config, const Tokenizer& tokenizer) {
  std::vector<int32_t> ids;
  auto add = [&](int id) {
    if (id >= 0 && std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
  };
  add(tokenizer.eos_id());
  add(model_config.eos_token_id);
  for (const int id : model_config.extra_eos_token_ids) add(id);
  for (const int id : tokenizer.extra_stop_ids()) add(id);
  return ids;
}

}  // namespace

int plan_num_kv_blocks(const EngineConfig& config, size_t block_bytes, int max_model_len,
                       size_t default_budget_bytes) {
  if (config.num_kv_blocks > 0) return config.num_kv_blocks;
  if (config.kv_cache_bytes > 0)
    return KvCacheManager::num_blocks_for_budget(config.kv_cache_bytes, block_bytes);
  const int64_t blocks_per_request = (max_model_len + config.block_size - 1) / config.block_size;
  const int64_t wanted = blocks_per_request * config.max_num_seqs;
  const int64_t affordable =
      static_cast<int64_t>(default_budget_bytes / std::max<size_t>(block_bytes, 1));
  return static_cast<int>(std::max<int64_t>(1, std::min(wanted, affordable)));
}

Engine::Engine(const ModelConfig& model_config, const Tokenizer& tokenizer,
               std::unique_ptr<Backend> backend, const EngineConfig& config)
    : model_config_(model_config),
      tokenizer_(tokenizer),
      backend_(std::move(backend)),
      // A GPU backend reserves its activations now and sizes the KV pool from what is left
      // (--gpu-memory-utilization); the CPU backend leaves the config as it is.
      config_(fit_engine_to_backend(*backend_, config)),
      output_processor_(tokenizer, eos_ids(model_config, tokenizer)),
      grammar_constraints_(tokenizer) {
  if (config_.block_size < 1) fail("block size must be at least 1 (got ", config_.block_size, ")");
  max_model_len_ = model_config.max_position_embeddings;
  if (config_.max_model_len > 0) max_model_len_ = std::min(max_model_len_, config_.max_model_len);
  config_.max_num_batched_tokens = resolve_max_num_batched_tokens(config_, *backend_);
  const size_t block_bytes = backend_->kv_block_bytes(config_.block_size);
  // A hybrid model's state slots come out of the same budget first, the blocks from the rest.
  const StateSlotPlan state_plan = plan_state_slots(
      config_, model_config.is_hybrid() ? std::max<size_t>(backend_->state_slot_bytes(), 1) : 0,
      config_.kv_cache_bytes > 0 ? config_.kv_cache_bytes : kDefaultKvBudgetBytes);
  const int num_blocks = plan_num_kv_blocks_beside_state(
      config_, block_bytes, max_model_len_, kDefaultKvBudgetBytes, state_plan.pool_bytes());
  if (num_blocks < 1)
    fail("the KV cache budget is smaller than one block (", block_bytes, " bytes)");
  check_kv_pool_fits_host_memory(num_blocks, block_bytes);
  // The backend's pool first: a GPU refuses a pool larger than its memory before the host
  // spends anything on bookkeeping for it.
  backend_->allocate_kv_cache(num_blocks, config_.block_size);
  if (state_plan.num_slots > 0) {
    backend_->allocate_state_slots(state_plan.num_slots);
    state_pool_ = std::make_unique<StatePool>(StatePoolConfig{
        .num_slots = state_plan.num_slots, .max_checkpoints = state_plan.max_checkpoints});
  }
  kv_cache_manager_ = std::make_unique<KvCacheManager>(
      KvCacheConfig{.num_blocks = num_blocks,
                    .block_size = config_.block_size,
                    .enable_prefix_caching = config_.enable_prefix_caching,
                    .sliding_window = model_config.kv_window()});
  scheduler_ = std::make_unique<Scheduler>(
      SchedulerConfig{.max_num_seqs = config_.max_num_seqs,
                      .max_num_batched_tokens = config_.max_num_batched_tokens,
                      .max_model_len = max_model_len_,
                      .enable_chunked_prefill = config_.enable_chunked_prefill},
      *kv_cache_manager_, state_pool_.get());
  runner_ = std::make_unique<ModelRunner>(*backend_, config_.block_size, model_config.vocab_size);
}

Engine::~Engine() = default;

int resolve_max_num_batched_tokens(const EngineConfig& config, const Backend& backend) {
  return config.max_num_batched_tokens > 0 ? config.max_num_batched_tokens
                                           : backend.default_max_num_batched_tokens();
}

void Engine::check_kv_pool_fits_host_memory(int num_blocks, size_t block_bytes) const {
  // Every backend keeps the block pool's bookkeeping in host memory; the CPU backend (no device
  // memory) keeps the K and V tensors there too, and Linux would grant a too-large pool and
  // kill the process while it is zeroed, without a message.
  const bool is_pool_on_host = backend_->memory().device_total_bytes == 0;
  const size_t bytes_per_block = sizeof(Block) + (is_pool_on_host ? block_bytes : 0);
  const size_t available = available_system_memory_bytes();
  if (available == 0 || static_cast<size_t>(num_blocks) <= available / bytes_per_block) return;
  const std::string sized_by =
      config_.num_kv_blocks > 0
          ? str_cat("--kv-blocks ", config_.num_kv_blocks)
          : (config_.kv_cache_bytes > 0 ? str_cat("--kv-cache-bytes ", config_.kv_cache_bytes)
                                        : std::string("--max-num-seqs x --max-model-len"));
  fail("the KV cache of ", num_blocks, " blocks (", sized_by, ") needs ",
       static_cast<double>(num_blocks) * static_cast<double>(bytes_per_block) / (1 << 30),
       " GiB of host memory but only ", static_cast<double>(available) / (1 << 30),
       " GiB is available; lower ", config_.num_kv_blocks > 0 ? "--kv-blocks" : "--kv-cache-bytes");
}

RequestId Engine::add_request(std::vector<int32_t> prompt_token_ids, const SamplingParams& params,
                              uint64_t sample_key, std::shared_ptr<const Grammar> grammar) {
  validate_sampling_params(params);
  // The engine never compiles: a source reaching it uncompiled would run unconstrained.
  if (params.grammar && !grammar)
    fail("a request's grammar source reached the engine uncompiled (compile it first)");
  for (const int32_t id : prompt_token_ids) {
    if (id < 0 || id >= model_config_.vocab_size)
      fail("prompt token id ", id, " is outside the vocabulary");
  }
  const RequestId id = next_request_id_++;
  const bool at_start = prompt_token_ids.empty() || (prompt_token_ids.size() == 1 &&
                                                     prompt_token_ids[0] == tokenizer_.bos_id());
  auto request = make_request(id, std::move(prompt_token_ids), params, sample_key, 0);
  if (grammar) {
    request->grammar_matcher = grammar_constraints_.make_matcher(grammar);
    request->grammar_deferred =
        params.reasoning.format != ReasoningFormat::None && params.reasoning.starts_in_reasoning;
  }
  request->arrival_time = Clock::now();
  group_of_[id] = id;
  group_members_[id] = {id};
  output_processor_.add(id, params, at_start);
  scheduler_->add_request(std::move(request));  // a rejection is reported by the next step
  return id;
}

void Engine::abort(RequestId group_id) {
  const auto it = group_members_.find(group_id);
  if (it == group_members_.end()) return;
  for (const RequestId id : it->second) {
    if (scheduler_->abort_request(id)) pending_finished_.push_back(id);
  }
}

StepResult Engine::step() {
  const auto begin = Clock::now();
  if (start_time_ == Clock::time_point{}) start_time_ = begin;
  StepResult result;
  for (const RequestId id : pending_finished_) collect_finished(id, result);
  pending_finished_.clear();

  SchedulerOutput step = scheduler_->schedule();
  for (const RequestId id : step.failed_request_ids) collect_finished(id, result);
  for (const auto& scheduled : step.requests) {
    Request* request = scheduler_->find_request(scheduled.request_id);
    if (request && request->first_scheduled_time == Clock::time_point{})
      request->first_scheduled_time = begin;
  }
  prepare_device_sampling(step);
  runner_->execute(step, runner_output_, sample_rows_, &step_masks_, sample_row_counts_);
  scheduler_->on_step_done(step);
  sample_step(step, runner_output_, result);
  if (config_.check_invariants) scheduler_->check_invariants();
  fill_stats(step, std::chrono::duration<double, std::milli>(Clock::now() - begin).count(), result);
  return result;
}

// A prompt's first sample with n > 1 hands its logits to the other n - 1 samples.
bool Engine::is_fork_point(const Request& request) {
  return request.sampling_params.n > 1 && request.num_output_tokens() == 0 &&
         request.sample_idx == 0 && group_members_[request.request_id].size() == 1;
}

void Engine::prepare_device_sampling(const SchedulerOutput& step) {
  sample_rows_.clear();
  sample_row_counts_.clear();
  step_masks_.matchers.clear();
  if (!config_.sample_on_device || !backend_->samples_on_device()) return;
  for (const auto& scheduled : step.requests) {
    if (!scheduled.needs_sample) continue;
    const Request* request = scheduler_->find_request(scheduled.request_id);
    if (!request) {
      sample_rows_.clear();
      sample_row_counts_.clear();
      step_masks_.matchers.clear();
      return;
    }
    // A grammar's mask goes to the device with the sampling parameters, and log-probabilities
    // come back with the token. A prompt forking into n samples draws all n from its logits row
    // on the device: the parent's row, then one per child with the child's sample index (its
    // context is the parent's: the same prompt, no output yet; its grammar state the parent's).
    const int count = is_fork_point(*request) ? request->sampling_params.n : 1;
    GrammarMatcher* matcher = active_matcher(*request);
    for (int s = 0; s < count; ++s) {
      sample_rows_.push_back(SampleRow{
          &request->sampling_params,
          SamplingContext{request->prompt_token_ids(), request->output_token_ids(),
                          request->sample_key, request->sample_idx + static_cast<uint32_t>(s)},
          matcher != nullptr});
      step_masks_.matchers.push_back(matcher);
    }
    sample_row_counts_.push_back(count);
  }
}

void Engine::sample_step(const SchedulerOutput&, RunnerOutput& runner_output, StepResult& result) {
  size_t device_row = 0;  // the first device row of request i (a fork has several)
  for (size_t i = 0; i < runner_output.sampled_request_ids.size(); ++i) {
    Request* request = scheduler_->find_request(runner_output.sampled_request_ids[i]);
    if (runner_output.sampled_on_device) {
      const size_t first_row = device_row;
      device_row += static_cast<size_t>(sample_row_counts_[i]);
      if (!request || request->is_finished()) continue;  // aborted during the step
      accept_device_rows(*request, runner_output, first_row, sample_row_counts_[i], result);
      continue;
    }
    if (!request || request->is_finished()) continue;  // aborted during the step
    std::span<float> logits = runner_output.logits_row(i);
    // Log-probabilities describe the raw logits: kept before the grammar mask and the sampler
    // change them.
    std::span<const float> raw_logits;
    if (request->sampling_params.logprobs >= 0) {
      raw_logits_.assign(logits.begin(), logits.end());
      raw_logits = raw_logits_;
    }
    // Before forking: the samples of a prompt share its grammar state at the fork.
    if (GrammarMatcher* matcher = active_matcher(*request);
        matcher && grammar_constraints_.mask_logits(*matcher, logits) == 0) {
      fail_request(*request, "the grammar allows no token of the vocabulary here", result);
      continue;
    }
    if (is_fork_point(*request)) fork_samples(*request, logits, raw_logits, result);
    const SamplingContext context{request->prompt_token_ids(), request->output_token_ids(),
                                  request->sample_key, request->sample_idx};
    accept_token(*request, sampler_.sample(logits, request->sampling_params, context), raw_logits,
                 result);
  }
}

// Takes the device's tokens for request's rows [first_row, first_row + count): the parent's, and
// at a fork each child's, created first as fork_samples creates them on the host.
void Engine::accept_device_rows(Request& request, RunnerOutput& out, size_t first_row, int count,
                                StepResult& result) {
  const auto take = [&](Request& r, size_t row) {
    std::optional<TokenLogprobs> logprobs;
    if (r.sampling_params.logprobs >= 0) logprobs = std::move(out.sampled_logprobs[row]);
    accept_sampled(r, out.sampled_token_ids[row], std::move(logprobs), result);
  };
  if (out.sampled_token_ids[first_row] < 0) {  // the backend's answer to a mask allowing nothing
    fail_request(request, "the grammar allows no token of the vocabulary here", result);
    return;
  }
  for (int s = 1; s < count; ++s)
    take(add_fork_child(request, static_cast<uint32_t>(s)), first_row + static_cast<size_t>(s));
  take(request, first_row);
}

// A child of a prompt forking into n samples: it takes the parent's blocks (copied on write
// later), its grammar state and its place in the parent's group.
Request& Engine::add_fork_child(Request& parent, uint32_t sample_idx) {
  const RequestId child_id = next_request_id_++;
  auto child = make_child_request(parent, child_id, sample_idx);
  child->arrival_time = parent.arrival_time;
  child->first_scheduled_time = parent.first_scheduled_time;
  group_of_[child_id] = parent.request_id;
  group_members_[parent.request_id].push_back(child_id);
  const bool at_start =
      parent.num_prompt_tokens == 0 ||
      (parent.num_prompt_tokens == 1 && parent.token_ids[0] == tokenizer_.bos_id());
  output_processor_.add(child_id, parent.sampling_params, at_start);
  scheduler_->fork_request(parent.request_id, std::move(child));
  return *scheduler_->find_request(child_id);
}

// The n samples of a prompt share its prefill: each child draws its first token from the same
// logits with its own sample index.
void Engine::fork_samples(Request& parent, std::span<const float> logits,
                          std::span<const float> raw_logits, StepResult& result) {
  for (uint32_t sample_idx = 1; sample_idx < static_cast<uint32_t>(parent.sampling_params.n);
       ++sample_idx) {
    Request* forked = &add_fork_child(parent, sample_idx);
    logits_copy_.assign(logits.begin(), logits.end());
    const SamplingContext context{forked->prompt_token_ids(), forked->output_token_ids(),
                                  forked->sample_key, forked->sample_idx};
    accept_token(*forked, sampler_.sample(logits_copy_, forked->sampling_params, context),
                 raw_logits, result);
  }
}

void Engine::accept_token(Request& request, int32_t token_id, std::span<const float> raw_logits,
                          StepResult& result) {
  std::optional<TokenLogprobs> logprobs;
  if (!raw_logits.empty())
    logprobs = token_logprobs(raw_logits, token_id, request.sampling_params.logprobs);
  accept_sampled(request, token_id, std::move(logprobs), result);
}

void Engine::accept_sampled(Request& request, int32_t token_id,
                            std::optional<TokenLogprobs> logprobs, StepResult& result) {
  if (!append_output(request, token_id, std::move(logprobs), /*is_forced=*/false, result)) return;
  if (request.sampling_params.reasoning.format != ReasoningFormat::None)
    follow_reasoning(request, result);
}

bool Engine::append_output(Request& request, int32_t token_id,
                           std::optional<TokenLogprobs> logprobs, bool is_forced,
                           StepResult& result) {
  if (is_forced) {
    scheduler_->append_forced_token(request.request_id, token_id);
  } else {
    scheduler_->append_token(request.request_id, token_id);
  }
  if (request.first_token_time == Clock::time_point{}) request.first_token_time = Clock::now();
  const TokenOutcome outcome = output_processor_.on_token(request.request_id, token_id, is_forced);
  TokenDelta delta{request.request_id, group_of_[request.request_id], request.sample_idx, token_id,
                   outcome.new_text,   outcome.new_reasoning};
  if (logprobs) {
    request.output_logprobs.push_back(*logprobs);
    delta.logprobs = std::move(logprobs);
  }
  result.new_tokens.push_back(std::move(delta));
  GrammarMatcher* matcher = active_matcher(request);
  if (matcher && !matcher->accept_token(token_id)) {
    fail_request(request, str_cat("grammar: token ", token_id, ": ", matcher->rejection_reason()),
                 result);
    return false;
  }
  // A complete grammar that allows nothing more ends the row as EOS would.
  const bool is_grammar_done =
      matcher && (matcher->is_terminated() || (matcher->is_complete() && !matcher->can_continue()));
  if (outcome.is_stopped || is_grammar_done) {
    finish(request.request_id, FinishReason::Stop, result);
    return false;
  }
  if (scheduler_->has_reached_length(request.request_id)) {
    finish(request.request_id, FinishReason::Length, result);
    return false;
  }
  return true;
}

void Engine::follow_reasoning(Request& request, StepResult& result) {
  const ReasoningParams& reasoning = request.sampling_params.reasoning;
  const ReasoningPhase& phase = output_processor_.reasoning_phase(request.request_id);
  const std::vector<int32_t>* forced = nullptr;
  if (phase.in_reasoning && reasoning.budget >= 0 &&
      phase.num_reasoning_tokens >= reasoning.budget) {
    forced = &reasoning_text_ids(reasoning.format, /*close=*/true);
  } else if (phase.answer_began && request.grammar_deferred) {
    forced = &reasoning_text_ids(reasoning.format, /*close=*/false);
  }
  if (forced) {
    // A forced token's probability is the engine's, not the model's: its log-probability is 0.
    const bool wants_logprobs = request.sampling_params.logprobs >= 0;
    for (const int32_t id : *forced) {
      std::optional<TokenLogprobs> logprobs;
      if (wants_logprobs) logprobs = TokenLogprobs{};
      if (!append_output(request, id, std::move(logprobs), /*is_forced=*/true, result)) return;
    }
  }
  if (request.grammar_deferred && output_processor_.reasoning_phase(request.request_id).in_answer) {
    request.grammar_deferred = false;
  }
}

const std::vector<int32_t>& Engine::reasoning_text_ids(ReasoningFormat format, bool close) {
  const auto key = std::make_pair(format, close);
  auto it = reasoning_text_ids_.find(key);
  if (it == reasoning_text_ids_.end()) {
    const std::string_view text =
        close ? reasoning_close_text(format) : reasoning_answer_separator(format);
    it = reasoning_text_ids_
             .emplace(key, text.empty()
                               ? std::vector<int32_t>{}
                               : tokenizer_.encode(
                                     text, EncodeOptions{.add_bos = false, .parse_special = true}))
             .first;
  }
  return it->second;
}

GrammarMatcher* Engine::active_matcher(const Request& request) {
  return request.grammar_deferred ? nullptr : request.grammar_matcher.get();
}

void Engine::fail_request(Request& request, std::string message, StepResult& result) {
  request.error = std::move(message);
  finish(request.request_id, FinishReason::Error, result);
}

void Engine::finish(RequestId request_id, FinishReason reason, StepResult& result) {
  scheduler_->finish_request(request_id, reason);
  collect_finished(request_id, result);
}

void Engine::collect_finished(RequestId request_id, StepResult& result) {
  std::unique_ptr<Request> request = scheduler_->release_finished(request_id);
  request->finished_time = Clock::now();
  FinishedRequest done;
  done.request_id = request_id;
  done.group_id = group_of_.at(request_id);
  done.sample_idx = request->sample_idx;
  done.finish_reason = request->finish_reason;
  done.error = request->error;
  done.num_prompt_tokens = request->num_prompt_tokens;
  const auto outputs = request->output_token_ids();
  done.output_token_ids.assign(outputs.begin(), outputs.end());
  FinishedOutput output = output_processor_.finish(request_id);
  if (!output.answer_rest.empty() || !output.reasoning_rest.empty()) {
    result.new_tokens.push_back(TokenDelta{request_id, done.group_id, done.sample_idx, -1,
                                           std::move(output.answer_rest),
                                           std::move(output.reasoning_rest)});
  }
  done.output_text = std::move(output.answer);
  done.reasoning_text = std::move(output.reasoning);
  done.num_reasoning_tokens = output.num_reasoning_tokens;
  done.num_preemptions = request->num_preemptions;
  done.output_logprobs = std::move(request->output_logprobs);
  if (request->grammar_matcher) {
    done.is_valid =
        request->grammar_matcher->is_terminated() || request->grammar_matcher->is_complete();
  }
  done.arrival_s = std::chrono::duration<double>(request->arrival_time - created_time_).count();
  done.queue_ms = ms_between(request->arrival_time, request->first_scheduled_time);
  done.ttft_ms = ms_between(request->arrival_time, request->first_token_time);
  done.total_ms = ms_between(request->arrival_time, request->finished_time);
  // A prompt that ends before its fork (aborted or failed while waiting, or at its first
  // token) ends its n - 1 samples that never ran too: every group reports n results.
  const bool is_unforked = request->sample_idx == 0 && request->sampling_params.n > 1 &&
                           done.output_token_ids.empty() &&
                           group_members_[done.group_id].size() == 1;
  group_of_.erase(request_id);
  auto& members = group_members_[done.group_id];
  members.erase(std::remove(members.begin(), members.end(), request_id), members.end());
  // Keep the group entry while the parent has not forked yet; drop it once everyone is done.
  if (members.empty()) group_members_.erase(done.group_id);
  const uint32_t num_samples = is_unforked ? static_cast<uint32_t>(request->sampling_params.n) : 1;
  result.finished.push_back(std::move(done));
  for (uint32_t sample_idx = 1; sample_idx < num_samples; ++sample_idx) {
    FinishedRequest never_ran = result.finished.back();
    never_ran.request_id = next_request_id_++;
    never_ran.sample_idx = sample_idx;
    result.finished.push_back(std::move(never_ran));
  }
}

void Engine::fill_stats(const SchedulerOutput& step, double step_ms, StepResult& result) {
  StepStats& s = result.stats;
  s.step_index = step_index_++;
  s.step_time_ms = step_ms;
  s.elapsed_s = std::chrono::duration<double>(Clock::now() - start_time_).count();
  s.num_scheduled_requests = static_cast<int>(step.requests.size());
  s.num_scheduled_tokens = step.total_num_scheduled_tokens;
  for (const auto& r : step.requests) {
    if (r.is_prefill) s.num_prompt_tokens += r.num_scheduled_tokens;
  }
  for (const auto& t : result.new_tokens) s.num_generation_tokens += t.token_id >= 0 ? 1 : 0;
  total_prompt_tokens_ += s.num_prompt_tokens;
  total_generation_tokens_ += s.num_generation_tokens;

  // Rates over the last second of steps, with running sums so a step costs O(1) here.
  rate_window_.push_back({step_ms, s.num_prompt_tokens, s.num_generation_tokens});
  window_ms_ += step_ms;
  window_prompt_tokens_ += s.num_prompt_tokens;
  window_generation_tokens_ += s.num_generation_tokens;
  while (rate_window_.size() > 1 && window_ms_ - rate_window_.front().step_ms >= kRateWindowMs) {
    window_ms_ -= rate_window_.front().step_ms;
    window_prompt_tokens_ -= rate_window_.front().prompt_tokens;
    window_generation_tokens_ -= rate_window_.front().generation_tokens;
    rate_window_.pop_front();
  }
  if (window_ms_ > 0.0) {
    s.prompt_tokens_per_s = 1000.0 * static_cast<double>(window_prompt_tokens_) / window_ms_;
    s.generation_tokens_per_s =
        1000.0 * static_cast<double>(window_generation_tokens_) / window_ms_;
  }
  s.num_running = scheduler_->num_running();
  s.num_waiting = scheduler_->num_waiting();
  s.max_num_seqs = config_.max_num_seqs;
  s.num_preemptions = scheduler_->num_preemptions();
  s.num_finished = scheduler_->num_finished();
  s.total_prompt_tokens = total_prompt_tokens_;
  s.total_generation_tokens = total_generation_tokens_;
  s.num_kv_blocks = kv_cache_manager_->num_blocks();
  s.num_kv_blocks_used = kv_cache_manager_->num_used_blocks();
  s.num_kv_blocks_cached = kv_cache_manager_->num_cached_free_blocks();
  s.num_kv_blocks_free = kv_cache_manager_->num_free_blocks();
  peak_kv_blocks_used_ = std::max(peak_kv_blocks_used_, s.num_kv_blocks_used);
  s.peak_kv_blocks_used = peak_kv_blocks_used_;
  s.num_kv_tokens = scheduler_->num_running_kv_tokens();
  s.prefix_cache_hit_rate = kv_cache_manager_->prefix_cache_stats().hit_rate();
  if (state_pool_ != nullptr) {
    s.num_state_slots = state_pool_->num_slots();
    s.num_state_slots_used = state_pool_->num_request_slots();
    s.num_state_checkpoints = state_pool_->num_checkpoints();
    s.state_slot_bytes = backend_->state_slot_bytes();
    s.num_state_checkpoint_hits = state_pool_->checkpoint_stats().num_restored;
  }
  s.memory = backend_->memory();
}

KvBlockMap Engine::kv_block_map() const {
  const BlockPool& pool = kv_cache_manager_->block_pool();
  KvBlockMap map;
  map.block_size = config_.block_size;
  map.states.resize(static_cast<size_t>(pool.num_blocks()));
  map.owner_rows.assign(map.states.size(), -1);
  if (state_pool_ != nullptr) {
    map.num_state_slots = state_pool_->num_slots();
    map.num_state_slots_used = state_pool_->num_request_slots();
    map.num_state_checkpoints = state_pool_->num_checkpoints();
    map.state_slot_bytes = backend_->state_slot_bytes();
  }
  for (int32_t id = 0; id < pool.num_blocks(); ++id) {
    const Block& block = pool.block(id);
    map.states[static_cast<size_t>(id)] =
        block.is_free ? (block.has_hash ? KvBlockState::CachedFree : KvBlockState::Free)
                      : (block.ref_count > 1 ? KvBlockState::Shared : KvBlockState::Owned);
  }
  for (const auto& [request_id, group_id] : group_of_) {
    if (!kv_cache_manager_->has_request(request_id)) continue;
    const Request* request = scheduler_->find_request(request_id);
    if (!request) continue;
    for (const int32_t block_id : kv_cache_manager_->block_table(request_id)) {
      if (block_id == kNoBlock) continue;  // given back outside a sliding window
      map.owner_rows[static_cast<size_t>(block_id)] = static_cast<int64_t>(request->sample_key);
    }
  }
  return map;
}

}  // namespace sluice
