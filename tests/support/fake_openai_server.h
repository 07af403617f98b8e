// An OpenAI-compatible server for remote-job tests that misbehaves on cue: it answers each
// completion with a text derived from the prompt ("answer to: <prompt>"), or with the next
// scripted fault — 429 with a Retry-After, 500, a dropped connection, a slow answer, a malformed
// body, a body that never ends — and records what it saw (requests, bodies, arrival times, the
// most in flight at once). A prompt containing "ALWAYS-500" always gets a 500, one containing
// "ALWAYS-ENDLESS" always an endless body. Runs in the test's process on a free port.
#pragma once

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

namespace sluice::test {

class FakeOpenAiServer {
 public:
  enum class Fault { TooManyRequests, ServerError, Drop, Slow, Malformed, BadRequest, Endless };

  struct Seen {
    std::string path;
    nlohmann::json body;
    std::chrono::steady_clock::time_point when;
    std::string authorization;
  };

  explicit FakeOpenAiServer(std::string model = "fake", std::string retry_after = "1")
      : model_(std::move(model)), retry_after_(std::move(retry_after)) {
    server_.Get("/v1/models", [this](const httplib::Request&, httplib::Response& res) {
      res.set_content(nlohmann::json{{"object", "list"}, {"data", {{{"id", model_}}}}}.dump(),
                      "application/json");
    });
    const auto complete = [this](const httplib::Request& req, httplib::Response& res) {
      answer(req, res);
    };
    server_.Post("/v1/completions", complete);
    server_.Post("/v1/chat/completions", complete);
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    // stop() before the loop runs would not stop it.
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~FakeOpenAiServer() {
    is_stopping_ = true;  // slow answers end now
    server_.stop();
    thread_.join();
  }

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }
  void script(std::vector<Fault> faults) {
    const std::lock_guard lock(mutex_);
    faults_.assign(faults.begin(), faults.end());
  }
  void set_slow_seconds(double s) { slow_s_ = s; }
  // Chat answers carry a reasoning under these message keys (reasoning_content, reasoning), the
  // first key's "thought about: <prompt>", any other's "other", and 2 reasoning tokens in the
  // usage; none by default.
  void set_reasoning_keys(std::vector<std::string> keys) {
    const std::lock_guard lock(mutex_);
    reasoning_keys_ = std::move(keys);
  }
  static std::string reasoning_about(const std::string& prompt) {
    return "thought about: " + prompt;
  }
  std::vector<Seen> seen() const {
    const std::lock_guard lock(mutex_);
    return seen_;
  }
  int max_in_flight() const { return max_in_flight_.load(); }

  // The text the fake answers a prompt with.
  static std::string answer_to(const std::string& prompt) { return "answer to: " + prompt; }

 private:
  void answer(const httplib::Request& req, httplib::Response& res) {
    const int now_in_flight = ++in_flight_;
    for (int m = max_in_flight_.load();
         now_in_flight > m && !max_in_flight_.compare_exchange_weak(m, now_in_flight);) {
    }
    const auto body = nlohmann::json::parse(req.body, nullptr, false);
    const bool is_chat = req.path.find("chat") != std::string::npos;
    std::string prompt;
    if (is_chat && body.contains("messages") && !body["messages"].empty())
      prompt = body["messages"].back().value("content", "");
    else if (body.contains("prompt") && body["prompt"].is_string())
      prompt = body["prompt"].get<std::string>();
    std::optional<Fault> fault;
    {
      const std::lock_guard lock(mutex_);
      seen_.push_back({req.path, body, std::chrono::steady_clock::now(),
                       req.get_header_value("Authorization")});
      if (!faults_.empty()) {
        fault = faults_.front();
        faults_.pop_front();
      }
    }
    if (prompt.find("ALWAYS-500") != std::string::npos) fault = Fault::ServerError;
    if (prompt.find("ALWAYS-ENDLESS") != std::string::npos) fault = Fault::Endless;
    reply(res, fault, prompt, is_chat);
    --in_flight_;
  }

  void reply(httplib::Response& res, std::optional<Fault> fault, const std::string& prompt,
             bool is_chat) {
    const auto error = [&](int status, const std::string& message) {
      res.status = status;
      res.set_content(nlohmann::json{{"error", {{"message", message}, {"type", "fake"}}}}.dump(),
                      "application/json");
    };
    if (fault == Fault::TooManyRequests) {
      res.set_header("Retry-After", retry_after_);
      return error(429, "slow down");
    }
    if (fault == Fault::ServerError) return error(500, "the fake server broke");
    if (fault == Fault::BadRequest) return error(400, "the fake server refuses this request");
    if (fault == Fault::Malformed) return res.set_content("{\"choices\": [", "application/json");
    if (fault == Fault::Drop) {
      res.set_content_provider(1000, "application/json",
                               [](size_t, size_t, httplib::DataSink&) { return false; });
      return;
    }
    if (fault == Fault::Endless) {  // 64 KiB chunks until the client hangs up
      res.set_chunked_content_provider("application/json", [this](size_t, httplib::DataSink& sink) {
        const std::string chunk(64 << 10, ' ');
        return !is_stopping_ && sink.write(chunk.data(), chunk.size());
      });
      return;
    }
    if (fault == Fault::Slow) {
      const auto until =
          std::chrono::steady_clock::now() + std::chrono::duration<double>(slow_s_.load());
      while (!is_stopping_ && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    std::vector<std::string> reasoning_keys;
    {
      const std::lock_guard lock(mutex_);
      reasoning_keys = reasoning_keys_;
    }
    nlohmann::json choice = {{"index", 0}, {"finish_reason", "stop"}};
    nlohmann::json usage = {{"prompt_tokens", 7}, {"completion_tokens", 3}, {"total_tokens", 10}};
    if (is_chat) {
      choice["message"] = {{"role", "assistant"}, {"content", answer_to(prompt)}};
      for (size_t i = 0; i < reasoning_keys.size(); ++i)
        choice["message"][reasoning_keys[i]] = i == 0 ? reasoning_about(prompt) : "other";
      if (!reasoning_keys.empty()) usage["completion_tokens_details"] = {{"reasoning_tokens", 2}};
    } else {
      choice["text"] = answer_to(prompt);
    }
    const nlohmann::json out = {{"id", "cmpl-fake"},
                                {"object", is_chat ? "chat.completion" : "text_completion"},
                                {"model", model_},
                                {"choices", {choice}},
                                {"usage", usage}};
    res.set_content(out.dump(), "application/json");
  }

  std::string model_;
  std::string retry_after_;
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  mutable std::mutex mutex_;
  std::deque<Fault> faults_;
  std::vector<Seen> seen_;
  std::vector<std::string> reasoning_keys_;
  std::atomic<int> in_flight_{0};
  std::atomic<int> max_in_flight_{0};
  std::atomic<double> slow_s_{3.0};
  std::atomic<bool> is_stopping_{false};
};

}  // namespace sluice::test
