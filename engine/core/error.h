// Error types of the engine. Loaders, parsers and the engine throw sluice::Error with a message
// that names the file, tensor, key or line at fault; callers at the edges (CLI, worker, server)
// catch it and show the message. Cancellation of long work throws sluice::Cancelled.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace sluice {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Thrown when the user cancels a long operation (model loading, a job).
class Cancelled : public Error {
 public:
  Cancelled() : Error("cancelled") {}
};

// Concatenates any streamable values into a string: str_cat("tensor ", name, ": ", n, " bytes").
template <typename... Args>
std::string str_cat(Args&&... args) {
  std::ostringstream out;
  (out << ... << std::forward<Args>(args));
  return out.str();
}

// Throws sluice::Error with the concatenated message.
template <typename... Args>
[[noreturn]] void fail(Args&&... args) {
  throw Error(str_cat(std::forward<Args>(args)...));
}

}  // namespace sluice
