#include "app/cli/progress_printer.h"

#include <unistd.h>

#include <cstdio>

namespace sluice::cli {

ProgressPrinter::ProgressPrinter(bool quiet)
    : quiet_(quiet), is_terminal_(::isatty(STDERR_FILENO) != 0), start_(std::chrono::steady_clock::now()) {}

void ProgressPrinter::update(const StepStats& stats, const JobProgress& progress) {
  last_ = stats;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_print_ < std::chrono::seconds(1)) return;
  last_print_ = now;
  print_line(progress, false);
}

void ProgressPrinter::note(const std::string& message) {
  if (has_open_line_) std::fputc('\n', stderr);
  has_open_line_ = false;
  std::fprintf(stderr, "%s\n", message.c_str());
}

void ProgressPrinter::finish(const JobProgress& progress) { print_line(progress, true); }

void ProgressPrinter::print_line(const JobProgress& p, bool is_final) {
  if (quiet_) return;
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double rate = elapsed > 0 ? static_cast<double>(last_.total_generation_tokens) / elapsed : 0.0;
  if (is_final) {
    if (has_open_line_) std::fputc('\n', stderr);
    std::fprintf(stderr,
                 "done: %lld rows in %.1f s (%lld failed, %lld skipped, %lld already in the job), %lld prompt + %lld "
                 "generated tokens (%.0f tok/s), %lld preemptions\n",
                 static_cast<long long>(p.rows_done), elapsed, static_cast<long long>(p.rows_failed),
                 static_cast<long long>(p.rows_skipped), static_cast<long long>(p.rows_resumed),
                 static_cast<long long>(last_.total_prompt_tokens), static_cast<long long>(last_.total_generation_tokens),
                 rate, static_cast<long long>(last_.num_preemptions));
    has_open_line_ = false;
    return;
  }
  const double kv_pct = last_.num_kv_blocks > 0 ? 100.0 * last_.num_kv_blocks_used / last_.num_kv_blocks : 0.0;
  // A hybrid model's state slots, next to the blocks.
  char state[64] = "";
  if (last_.num_state_slots > 0)
    std::snprintf(state, sizeof state, ", state slots %d/%d", last_.num_state_slots_used, last_.num_state_slots);
  std::fprintf(stderr,
               "%srows %lld (file %.0f%%) | %.0f gen tok/s, %.0f prompt tok/s | running %d, waiting %d | KV %.0f%%%s | "
               "%.0f s%s",
               is_terminal_ ? "\r" : "", static_cast<long long>(p.rows_done), 100.0 * p.file_fraction,
               last_.generation_tokens_per_s, last_.prompt_tokens_per_s, last_.num_running, last_.num_waiting, kv_pct,
               state, elapsed, is_terminal_ ? "\033[K" : "\n");
  has_open_line_ = is_terminal_;
  std::fflush(stderr);
}

}  // namespace sluice::cli
