// A `sluice serve` process on stories260K on a free port, for the CLI tests that speak to it
// (serve_cli_test, remote_cli_test).
#pragma once

#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/cli_test_util.h"

namespace sluice::test {

inline const char* const kModel = "stories";

inline int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0)
    throw std::runtime_error("bind");
  socklen_t len = sizeof(addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

// A `sluice serve` process on a free port, ready once /health answers. (A port found free can
// be taken by a test running beside this one before the server binds it: then another.)
class ServeProcess {
 public:
  explicit ServeProcess(std::vector<std::string> extra_args = {}) {
    for (int attempt = 1;; ++attempt) {
      port_ = free_port();
      try {
        start(extra_args);
        return;
      } catch (const std::runtime_error& e) {
        if (attempt == 5 || std::string(e.what()).find("cannot listen") == std::string::npos) throw;
      }
    }
  }

  void start(const std::vector<std::string>& extra_args) {
    std::vector<std::string> argv = {SLUICE_EXECUTABLE,
                                     "serve",
                                     "--model",
                                     shared_path("models/stories260K/gguf/stories260K-f32.gguf"),
                                     "--port",
                                     std::to_string(port_),
                                     "--served-model-name",
                                     kModel,
                                     "--threads",
                                     "2"};
    argv.insert(argv.end(), extra_args.begin(), extra_args.end());
    process_ = std::make_unique<BackgroundProcess>(argv);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline) {
      if (!process_->is_running())
        throw std::runtime_error("sluice serve exited: " + process_->wait().err);
      if (auto res = client().Get("/health"); res && res->status == 200) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    throw std::runtime_error("sluice serve did not answer /health within a minute");
  }

  httplib::Client client() const {
    httplib::Client c("127.0.0.1", port_);
    c.set_read_timeout(60, 0);
    return c;
  }

  // POSTs a JSON body; returns the status and the parsed body (null when not JSON).
  std::pair<int, nlohmann::json> post(const std::string& path, const std::string& body,
                                      const httplib::Headers& headers = {}) const {
    auto res = client().Post(path, headers, body, "application/json");
    if (!res) return {-1, nullptr};
    return {res->status, nlohmann::json::parse(res->body, nullptr, false)};
  }

  std::map<std::string, double> metrics() const {
    auto res = client().Get("/metrics");
    std::map<std::string, double> out;
    if (!res) return out;
    static const std::regex line(R"(^sluice:(\w+)\{model_name="[^"]*"\} (\S+)$)");
    std::istringstream in(res->body);
    std::string text;
    while (std::getline(in, text)) {
      std::smatch m;
      if (std::regex_match(text, m, line)) out[m[1]] = std::stod(m[2]);
    }
    return out;
  }

  bool is_running() { return process_->is_running(); }
  void kill_now() { process_->kill_now(); }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }
  int port() const { return port_; }

 private:
  int port_ = 0;
  std::unique_ptr<BackgroundProcess> process_;
};

}  // namespace sluice::test
