// Progress of a long CLI run on stderr: one line per second (rewritten in place on a
// terminal) with rows done, how far into the file, throughput, batch and KV usage; notes (row
// errors) in between.
#pragma once

#include <chrono>
#include <string>

#include "app/generation_job.h"
#include "engine/engine_stats.h"

namespace sluice::cli {

class ProgressPrinter {
 public:
  explicit ProgressPrinter(bool quiet);

  // Prints the status line when a second has passed since the last one.
  void update(const StepStats& stats, const JobProgress& progress);
  // Prints a message on its own line, quiet or not (the status line is redrawn after it).
  void note(const std::string& message);
  // Prints the final summary line.
  void finish(const JobProgress& progress);

 private:
  void print_line(const JobProgress& progress, bool is_final);

  bool quiet_;
  bool is_terminal_;
  bool has_open_line_ = false;
  StepStats last_{};
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_print_{};
};

}  // namespace sluice::cli
