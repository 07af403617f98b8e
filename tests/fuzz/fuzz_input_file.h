// The engine's readers take paths, so a harness writes each input to a file first: one file per
// name in a directory of the process's own under the temp directory (scripts/fuzz.sh points
// TMPDIR at build-fuzz/), removed when the process exits normally.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace sluice::fuzz {

// Writes bytes to <this process's directory>/<name> (replacing it) and returns the file's path.
std::string write_input_file(const std::string& name, const uint8_t* data, size_t size);

}  // namespace sluice::fuzz
