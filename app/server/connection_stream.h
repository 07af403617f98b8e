// The bytes of one client connection, for every request it carries. httplib's own stream lives
// for one request and reads ahead into a buffer that dies with it, so a second request sent in
// the same packet as the first (HTTP/1.1 pipelining) was lost, and the connection idled until its
// keep-alive timeout. This stream lives as long as the connection: what it read ahead is the start
// of the next request. It also caps the bytes one request may read — its head, then its body with
// the body's framing — so a line without end or an endless chunked body cannot grow the server's
// memory or hold a thread forever: past the cap every read fails, and is_past_limit() says so.
#pragma once

#include <httplib.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace sluice {

class ConnectionStream final : public httplib::Stream {
 public:
  // socket: a connected socket, not owned (HttpServer closes it). A read waits at most
  // read_timeout for a byte, a write at most write_timeout for room.
  ConnectionStream(int socket, std::chrono::microseconds read_timeout,
                   std::chrono::microseconds write_timeout);

  bool is_readable() const override;
  // True when a write can go out within the write timeout and the client has not closed.
  bool is_writable() const override;
  ssize_t read(char* ptr, size_t size) override;
  ssize_t write(const char* ptr, size_t size) override;
  void get_remote_ip_and_port(std::string& ip, int& port) const override;
  void get_local_ip_and_port(std::string& ip, int& port) const override;
  socket_t socket() const override { return socket_; }

  // From now on the request may read at most max_bytes more (its head; then, once the head is
  // admitted, its body and framing).
  void limit_request_bytes(uint64_t max_bytes);
  // True once a read was refused for passing the limit.
  bool is_past_limit() const { return is_past_limit_; }
  // Waits until the next request's first byte is here (read ahead, or on the socket), up to
  // timeout, asking should_stop every 50 ms. Returns false on timeout or when should_stop.
  bool wait_for_request(std::chrono::milliseconds timeout,
                        const std::function<bool()>& should_stop) const;
  // Closes the sending side, then reads and drops what the client still sends — at most
  // max_bytes, for at most max_time, until it pauses for a quarter of a second — so that a client
  // still sending a body the server refused reads the answer instead of a reset (closing a socket
  // with unread bytes resets it).
  void drain_and_close_write(uint64_t max_bytes, std::chrono::milliseconds max_time);
  uint64_t num_bytes_written() const { return num_bytes_written_; }

 private:
  static constexpr size_t kReadAheadBytes = 16 << 10;

  // Waits up to timeout for the socket to be readable (events POLLIN) or writable (POLLOUT).
  bool poll_socket(short events, std::chrono::microseconds timeout) const;
  // is_writable with a timeout of its own.
  bool is_writable_within(std::chrono::microseconds timeout) const;

  int socket_;
  std::chrono::microseconds read_timeout_;
  std::chrono::microseconds write_timeout_;
  std::vector<char> read_ahead_;  // [read_begin_, read_end_): read from the socket, not yet taken
  size_t read_begin_ = 0;
  size_t read_end_ = 0;
  uint64_t num_bytes_allowed_ = 0;  // this request may read this many more
  bool is_past_limit_ = false;
  uint64_t num_bytes_written_ = 0;
};

}  // namespace sluice
