#include "app/cli/progress_printer.h"

#include <unistd.h>

#include <cstdio>

namespace sluice::cli {

ProgressPrinter::ProgressPrinter(size_t num_rows, bool quiet)
    : num_rows_(num_rows),
      quiet_(quiet),
      is_terminal_(::isatty(STDERR_FILENO) != 0),
      start_(std::chrono::steady_clock::now()) {}

void ProgressPrinter::update(const StepStats& stats, size_t rows_done) {
  last_ = stats;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_print_ < std::chrono::seconds(1)) return;
  last_print_ = now;
  print_line(rows_done, false);
}

void ProgressPrinter::note(const std::string& message) {
  if (has_open_line_) std::fputc('\n', stderr);
  has_open_line_ = false;
  std::fprintf(stderr, "%s\n", message.c_str());
}

void ProgressPrinter::finish(size_t rows_done) {
  print_line(rows_done, true);
}

void ProgressPrinter::print_line(size_t rows_done, bool is_final) {
  if (quiet_) return;
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double kv_pct =
      last_.num_kv_blocks > 0 ? 100.0 * last_.num_kv_blocks_used / last_.num_kv_blocks : 0.0;
  const double rate =
      elapsed > 0 ? static_cast<double>(last_.total_generation_tokens) / elapsed : 0.0;
  if (is_final) {
    if (has_open_line_) std::fputc('\n', stderr);
    std::fprintf(stderr,
                 "done: %zu/%zu rows in %.1f s, %lld prompt + %lld generated tokens (%.0f tok/s), "
                 "%lld preemptions\n",
                 rows_done, num_rows_, elapsed, static_cast<long long>(last_.total_prompt_tokens),
                 static_cast<long long>(last_.total_generation_tokens), rate,
                 static_cast<long long>(last_.num_preemptions));
    has_open_line_ = false;
    return;
  }
  std::fprintf(stderr,
               "%srows %zu/%zu | %.0f gen tok/s, %.0f prompt tok/s | running %d, waiting %d | KV "
               "%.0f%% | %.0f s%s",
               is_terminal_ ? "\r" : "", rows_done, num_rows_, last_.generation_tokens_per_s,
               last_.prompt_tokens_per_s, last_.num_running, last_.num_waiting, kv_pct, elapsed,
               is_terminal_ ? "\033[K" : "\n");
  has_open_line_ = is_terminal_;
  std::fflush(stderr);
}

}  // namespace sluice::cli
