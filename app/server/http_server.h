// httplib's Server with its own loop over the requests of a connection; parsing, routing, the
// handlers and writing stay httplib's. The loop reads every request of a connection through one
// ConnectionStream, so requests sent back to back in one packet (HTTP/1.1 pipelining) are all
// answered, in order. It caps the bytes of each request's head, and it closes the connection after
// a request whose body was not read to its end — refused from its head (no key, too large, bad
// framing) or cut at its limit — since those bytes would otherwise be read as the next request;
// before closing it drops, for a moment, what the client still sends, so that a client busy
// sending a refused body gets to read the answer.
#pragma once

#include <httplib.h>

#include <chrono>
#include <cstdint>

namespace sluice {

class ConnectionStream;

class HttpServer final : public httplib::Server {
 public:
  struct Limits {
    uint64_t max_head_bytes = 64 << 10;   // request line and headers of one request
    uint64_t max_drain_bytes = 32 << 20;  // dropped before closing after a refused body
    std::chrono::milliseconds max_drain_time{2000};
  };

  explicit HttpServer(Limits limits) : limits_(limits) {}

  // The head limit, for the answer to a request past it.
  uint64_t max_head_bytes() const { return limits_.max_head_bytes; }

 private:
  // Serves a connection's requests until one says close, one cannot be kept alive, the client
  // idles past the keep-alive timeout, or the server stops; then closes the socket. Called by
  // httplib on a pool thread for each accepted connection.
  bool process_and_close_socket(socket_t sock) override;
  // Answers 431 when a request line passed the head limit before anything was answered (httplib
  // drops such a connection without a word).
  void answer_head_too_large(ConnectionStream& stream) const;

  Limits limits_;
};

}  // namespace sluice
