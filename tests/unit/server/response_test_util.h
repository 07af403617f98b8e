// Helpers for tests of the server's answers (tests/unit/server): reading a response's content
// provider to its end as httplib does, and splitting a stream into its events.
#pragma once

#include <httplib.h>

#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace sluice::test {

// Calls a response's content provider as httplib does until it is done (or fails), asking for
// at most max_length bytes a time; returns what it wrote, nullopt when the provider failed.
inline std::optional<std::string> provide_all(httplib::Response& res, size_t max_length) {
  std::string body;
  bool is_done = false;
  httplib::DataSink sink;
  sink.write = [&](const char* data, size_t size) {
    body.append(data, size);
    return true;
  };
  sink.done = [&] { is_done = true; };
  sink.is_writable = [] { return true; };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!is_done && (res.content_length_ == 0 || body.size() < res.content_length_)) {
    if (std::chrono::steady_clock::now() > deadline) {
      ADD_FAILURE() << "the provider did not finish within a minute";
      return std::nullopt;
    }
    if (!res.content_provider_(body.size(), max_length, sink)) return std::nullopt;
  }
  return body;
}

// The events of a stream: each "data: " line's JSON (or "[DONE]").
inline std::vector<std::string> sse_data(const std::string& body) {
  std::vector<std::string> out;
  size_t begin = 0;
  for (size_t end = 0; (end = body.find("\n\n", begin)) != std::string::npos; begin = end + 2) {
    const std::string event = body.substr(begin, end - begin);
    EXPECT_EQ(event.rfind("data: ", 0), 0u) << event;
    out.push_back(event.substr(6));
  }
  EXPECT_EQ(begin, body.size()) << "the stream ends inside an event";
  return out;
}

}  // namespace sluice::test
