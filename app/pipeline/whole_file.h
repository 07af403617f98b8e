// A pipeline's small files (verdicts, run figures, digests, model facts) appear only complete:
// written beside their path and renamed over it, so a kill -9 leaves the old file or the new one.
#pragma once

#include <string>

namespace sluice {

// Writes text to path through "<path>.writing". Throws Error naming the file when it cannot.
void write_whole_file(const std::string& path, const std::string& text);

}  // namespace sluice
