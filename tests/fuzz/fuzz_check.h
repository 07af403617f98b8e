// Property checks inside harnesses. A broken property is a bug even when nothing crashed, so it
// aborts, which libFuzzer reports like a crash and saves the input that caused it.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>

namespace sluice::fuzz {

// Prints what broke and aborts.
[[noreturn]] inline void fuzz_fail(const std::string& message) {
  std::fprintf(stderr, "fuzz property broken: %s\n", message.c_str());
  std::abort();
}

// Aborts with message unless condition holds.
inline void fuzz_require(bool condition, const std::string& message) {
  if (!condition) fuzz_fail(message);
}

// Checks that an error about the file at path names it, as every loader and reader promises.
inline void require_names_file(const std::exception& error, std::string_view path) {
  const std::string_view message = error.what();
  if (message.find(path) == std::string_view::npos) {
    fuzz_fail("the error does not name the file " + std::string(path) + ": " +
              std::string(message));
  }
}

}  // namespace sluice::fuzz
