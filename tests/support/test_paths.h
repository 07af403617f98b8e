// Paths for tests: the shared data beside the checkout (../shared) and the build tree. A test
// that needs shared data fails loudly when it is missing; it never skips.
#pragma once

#include <string>

namespace sluice::test {

// Returns the absolute path of `relative` under ../shared; throws (failing the test) when the
// file or directory does not exist.
std::string shared_path(const std::string& relative);

// Returns the build tree's directory (where bin/sluice lives).
std::string binary_dir();

// Returns the source tree's root.
std::string source_dir();

// Returns a fresh empty directory under the system temp dir for this test's files; it is removed
// when the test process exits (set SLUICE_KEEP_TEST_DIRS=1 to keep it).
std::string make_temp_dir(const std::string& name);

// Reads a whole file as bytes; throws when missing.
std::string read_file(const std::string& path);

// Writes bytes to a file; throws on failure.
void write_file(const std::string& path, const std::string& content);

}  // namespace sluice::test
