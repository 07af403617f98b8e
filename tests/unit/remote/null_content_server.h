// An OpenAI-compatible server whose chat answers to prompts containing "NULL-CONTENT" carry
// `"content": null` beside a refusal (what OpenAI sends when a model refuses); other prompts get
// "answer to: <prompt>". Counts the null answers it sent. Runs in the test's process on a free
// port; for the remote unit tests and the remote CLI tests (issue 27).
#pragma once

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

namespace sluice::test {

class NullContentServer {
 public:
  static constexpr const char* kModel = "null-fake";
  static constexpr const char* kMarker = "NULL-CONTENT";
  static constexpr const char* kRefusal = "I will not write that.";

  NullContentServer() {
    server_.Get("/v1/models", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(nlohmann::json{{"object", "list"}, {"data", {{{"id", kModel}}}}}.dump(),
                      "application/json");
    });
    server_.Post("/v1/chat/completions",
                 [this](const httplib::Request& req, httplib::Response& res) { answer(req, res); });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~NullContentServer() {
    server_.stop();
    thread_.join();
  }
  NullContentServer(const NullContentServer&) = delete;
  NullContentServer& operator=(const NullContentServer&) = delete;

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }
  int num_null_answers() const { return num_null_answers_.load(); }

 private:
  void answer(const httplib::Request& req, httplib::Response& res) {
    const auto body = nlohmann::json::parse(req.body, nullptr, false);
    std::string prompt;
    if (body.is_object() && body.contains("messages") && body["messages"].is_array() &&
        !body["messages"].empty())
      prompt = body["messages"].back().value("content", "");
    nlohmann::json message = {{"role", "assistant"}, {"content", "answer to: " + prompt}};
    if (prompt.find(kMarker) != std::string::npos) {
      message = {{"role", "assistant"}, {"content", nullptr}, {"refusal", kRefusal}};
      ++num_null_answers_;
    }
    const nlohmann::json out = {
        {"id", "chatcmpl-null"},
        {"object", "chat.completion"},
        {"model", kModel},
        {"choices", {{{"index", 0}, {"message", message}, {"finish_reason", "stop"}}}},
        {"usage", {{"prompt_tokens", 5}, {"completion_tokens", 0}}}};
    res.set_content(out.dump(), "application/json");
  }

  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::atomic<int> num_null_answers_{0};
};

}  // namespace sluice::test
