// A `sluice serve` process on stories260K on a free port, for the CLI tests that speak to it
// (serve_cli_test, remote_cli_test).
#pragma once

#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/cli_test_util.h"

namespace sluice::test {

inline const char* const kModel = "stories";

// True in the sanitizer build (scripts/build.sh asan), where the server runs several times
// slower and AddressSanitizer's quarantine keeps freed memory resident (up to 256 MB): tests
// scale their work down there, and resident-memory bounds hold for the release build only.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kIsSanitized = true;
#else
inline constexpr bool kIsSanitized = false;
#endif

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

  // The server's process id: the child of this process serving this port.
  int pid() const {
    if (pid_ > 0) return pid_;
    const std::string port = std::to_string(port_);
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
      const std::string name = entry.path().filename();
      if (name.find_first_not_of("0123456789") != std::string::npos) continue;
      std::ifstream stat(entry.path() / "stat");
      std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
      // pid (comm) state ppid ...: the command name may hold spaces, so read after its ')'.
      std::istringstream fields(text.substr(text.rfind(')') + 1));
      std::string state;
      int ppid = 0;
      if (!(fields >> state >> ppid) || ppid != ::getpid()) continue;
      std::ifstream cmdline_file(entry.path() / "cmdline");
      std::string cmdline((std::istreambuf_iterator<char>(cmdline_file)),
                          std::istreambuf_iterator<char>());
      std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
      if (cmdline.find(" serve ") != std::string::npos &&
          cmdline.find(" --port " + port + " ") != std::string::npos) {
        pid_ = std::stoi(name);
        return pid_;
      }
    }
    throw std::runtime_error("no child process serves port " + port);
  }

  // Returns a field of /proc/<pid>/status in bytes ("VmRSS": resident now, "VmHWM": the peak).
  size_t status_bytes(const std::string& field) const {
    std::ifstream status("/proc/" + std::to_string(pid()) + "/status");
    std::string line;
    while (std::getline(status, line)) {
      if (line.rfind(field + ":", 0) == 0) return std::stoull(line.substr(field.size() + 1)) << 10;
    }
    throw std::runtime_error("no " + field + " in /proc/<pid>/status");
  }

  bool is_running() { return process_->is_running(); }
  // Kills the server; returns what it wrote to stderr.
  std::string kill_and_read_stderr() {
    process_->kill_now();
    return process_->wait().err;
  }
  void kill_now() { process_->kill_now(); }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }
  int port() const { return port_; }

 private:
  int port_ = 0;
  mutable int pid_ = 0;
  std::unique_ptr<BackgroundProcess> process_;
};

// An HTTP/1.1 response as it came over the wire.
struct RawResponse {
  int status = 0;
  std::map<std::string, std::string> headers;  // names in lower case
  std::string body;

  // Returns a header's value ("" when absent); name in lower case.
  std::string header(const std::string& name) const {
    const auto it = headers.find(name);
    return it == headers.end() ? "" : it->second;
  }
};

// A client connection that sends exactly the bytes it is given, for what httplib's client would
// tidy up: pipelined requests, chunked uploads, repeated or malformed framing headers.
class RawConnection {
 public:
  explicit RawConnection(int port, int timeout_s = 60) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(port));
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0)
      throw std::runtime_error("cannot connect to port " + std::to_string(port));
    const timeval wait{timeout_s, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof(wait));
    ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &wait, sizeof(wait));
  }
  ~RawConnection() { close(); }
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  // Sends every byte; false when the server closed or reset the connection first.
  bool send(const std::string& bytes) {
    size_t offset = 0;
    while (offset < bytes.size()) {
      const ssize_t n = ::send(fd_, bytes.data() + offset, bytes.size() - offset, MSG_NOSIGNAL);
      if (n <= 0) return false;
      offset += static_cast<size_t>(n);
    }
    return true;
  }

  // Reads the next response; nullopt when the connection ended (or timed out) before one came.
  std::optional<RawResponse> read_response() {
    size_t head_end = 0;
    while ((head_end = buffer_.find("\r\n\r\n")) == std::string::npos) {
      if (!fill()) return std::nullopt;
    }
    const std::string head = buffer_.substr(0, head_end + 4);
    buffer_.erase(0, head_end + 4);
    RawResponse response;
    std::istringstream lines(head);
    std::string line;
    std::getline(lines, line);
    if (line.rfind("HTTP/1.1 ", 0) != 0) return std::nullopt;
    response.status = std::stoi(line.substr(9, 3));
    while (std::getline(lines, line) && line != "\r") {
      const size_t colon = line.find(':');
      if (colon == std::string::npos) continue;
      std::string name = line.substr(0, colon);
      std::transform(name.begin(), name.end(), name.begin(), ::tolower);
      std::string value = line.substr(colon + 1);
      value.erase(0, value.find_first_not_of(' '));
      if (!value.empty() && value.back() == '\r') value.pop_back();
      response.headers[name] = value;
    }
    if (response.status < 200 || response.status == 204 || response.status == 304) {
      return response;  // no body
    } else if (response.headers.count("content-length")) {
      const size_t length = std::stoull(response.headers["content-length"]);
      if (!read_exactly(length, response.body)) return std::nullopt;
    } else if (response.headers["transfer-encoding"] == "chunked") {
      if (!read_chunked(response.body)) return std::nullopt;
    } else {
      while (fill()) {
      }  // the body ends with the connection
      response.body = std::move(buffer_);
      buffer_.clear();
    }
    return response;
  }

  // True when the server ended the connection (end of stream or reset) with nothing more sent.
  bool is_closed_by_server() {
    if (!buffer_.empty()) return false;
    return !fill();
  }

  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  int fd() const { return fd_; }

 private:
  // Reads more bytes into the buffer; false at the end of the stream, a reset or the timeout.
  bool fill() {
    char chunk[16384];
    const ssize_t n = ::recv(fd_, chunk, sizeof(chunk), 0);
    if (n <= 0) return false;
    buffer_.append(chunk, static_cast<size_t>(n));
    return true;
  }
  bool read_exactly(size_t length, std::string& out) {
    while (buffer_.size() < length) {
      if (!fill()) return false;
    }
    out += buffer_.substr(0, length);
    buffer_.erase(0, length);
    return true;
  }
  bool read_line(std::string& line) {
    size_t end = 0;
    while ((end = buffer_.find("\r\n")) == std::string::npos) {
      if (!fill()) return false;
    }
    line = buffer_.substr(0, end);
    buffer_.erase(0, end + 2);
    return true;
  }
  bool read_chunked(std::string& out) {
    for (;;) {
      std::string size_line;
      if (!read_line(size_line)) return false;
      const size_t size = std::stoull(size_line, nullptr, 16);
      std::string crlf;
      if (size == 0) return read_line(crlf);
      if (!read_exactly(size, out) || !read_line(crlf)) return false;
    }
  }

  int fd_ = -1;
  std::string buffer_;  // received, not yet parsed
};

// Returns a chunked body: data cut into chunks of chunk_bytes, then the last chunk.
inline std::string chunked(const std::string& data, size_t chunk_bytes) {
  std::string out;
  char size[32];
  for (size_t offset = 0; offset < data.size(); offset += chunk_bytes) {
    const size_t n = std::min(chunk_bytes, data.size() - offset);
    std::snprintf(size, sizeof(size), "%zx\r\n", n);
    out += size;
    out.append(data, offset, n);
    out += "\r\n";
  }
  return out + "0\r\n\r\n";
}

}  // namespace sluice::test
