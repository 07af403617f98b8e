#include "app/server/connection_stream.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

namespace sluice {

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

int to_poll_ms(std::chrono::microseconds timeout) {
  if (timeout <= 0us) return 0;
  return static_cast<int>(std::max<int64_t>(1, (timeout.count() + 999) / 1000));
}

// The address and port of a socket address, as httplib writes them ("127.0.0.1", "::1").
void describe(const sockaddr_storage& addr, std::string& ip, int& port) {
  char text[INET6_ADDRSTRLEN] = {};
  if (addr.ss_family == AF_INET) {
    const auto& a = reinterpret_cast<const sockaddr_in&>(addr);
    if (inet_ntop(AF_INET, &a.sin_addr, text, sizeof(text))) ip = text;
    port = ntohs(a.sin_port);
  } else if (addr.ss_family == AF_INET6) {
    const auto& a = reinterpret_cast<const sockaddr_in6&>(addr);
    if (inet_ntop(AF_INET6, &a.sin6_addr, text, sizeof(text))) ip = text;
    port = ntohs(a.sin6_port);
  }
}

ssize_t recv_retrying(int socket, char* ptr, size_t size, int flags) {
  ssize_t n = 0;
  do {
    n = ::recv(socket, ptr, size, flags);
  } while (n < 0 && errno == EINTR);
  return n;
}

}  // namespace

ConnectionStream::ConnectionStream(int socket, std::chrono::microseconds read_timeout,
                                   std::chrono::microseconds write_timeout)
    : socket_(socket),
      read_timeout_(read_timeout),
      write_timeout_(write_timeout),
      read_ahead_(kReadAheadBytes) {}

bool ConnectionStream::poll_socket(short events, std::chrono::microseconds timeout) const {
  pollfd p{};
  p.fd = socket_;
  p.events = events;
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::microseconds>(deadline - Clock::now());
    const int r = ::poll(&p, 1, to_poll_ms(left));
    if (r > 0) return true;
    if (r == 0 || errno != EINTR) return false;
  }
}

bool ConnectionStream::is_readable() const {
  return read_begin_ < read_end_ || poll_socket(POLLIN, read_timeout_);
}

bool ConnectionStream::is_writable() const {
  return is_writable_within(write_timeout_);
}

bool ConnectionStream::is_writable_within(std::chrono::microseconds timeout) const {
  if (!poll_socket(POLLOUT, timeout)) return false;
  // As httplib's own stream: a client that closed its side (end of stream, or an error) is gone,
  // and a stream to it stops; bytes waiting to be read (a pipelined request) mean it is there.
  char byte = 0;
  const ssize_t n = recv_retrying(socket_, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  return n > 0 || (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK));
}

ssize_t ConnectionStream::read(char* ptr, size_t size) {
  if (size == 0) return 0;
  if (num_bytes_allowed_ == 0) {
    is_past_limit_ = true;
    return -1;
  }
  size = static_cast<size_t>(std::min<uint64_t>(size, num_bytes_allowed_));
  if (read_begin_ == read_end_) {
    if (!poll_socket(POLLIN, read_timeout_)) return -1;
    // A large read goes straight to the caller; a small one (httplib reads request lines a
    // byte at a time) fills the read-ahead buffer.
    if (size >= read_ahead_.size()) {
      const ssize_t n = recv_retrying(socket_, ptr, size, 0);
      if (n > 0) num_bytes_allowed_ -= static_cast<uint64_t>(n);
      return n;
    }
    const ssize_t n = recv_retrying(socket_, read_ahead_.data(), read_ahead_.size(), 0);
    if (n <= 0) return n;
    read_begin_ = 0;
    read_end_ = static_cast<size_t>(n);
  }
  const size_t n = std::min(size, read_end_ - read_begin_);
  std::memcpy(ptr, read_ahead_.data() + read_begin_, n);
  read_begin_ += n;
  num_bytes_allowed_ -= n;
  return static_cast<ssize_t>(n);
}

ssize_t ConnectionStream::write(const char* ptr, size_t size) {
  // Without MSG_DONTWAIT a send on the (blocking) socket waits until all of ptr is queued, with
  // no timeout: a write larger than the room poll saw blocked for as long as the client did not
  // read, so a client that never reads was never cut off. Here a send takes what fits and
  // returns; the caller writes the rest through write() again. One call waits at most
  // write_timeout for room in all: a poll that reports room which the send then refuses (EAGAIN,
  // as under the kernel's TCP memory pressure) waits again for what is left of it, a
  // millisecond later, instead of starting the timeout over (a loop that did kept a client that
  // never read connected for as long as the refusals lasted).
  const auto deadline = Clock::now() + write_timeout_;
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::microseconds>(deadline - Clock::now());
    if (left <= 0us || !is_writable_within(left)) return -1;
    ssize_t n = 0;
    do {
      n = ::send(socket_, ptr, size, MSG_NOSIGNAL | MSG_DONTWAIT);
    } while (n < 0 && errno == EINTR);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      std::this_thread::sleep_for(1ms);  // the room went: wait again
      continue;
    }
    if (n > 0) num_bytes_written_ += static_cast<uint64_t>(n);
    return n;
  }
}

void ConnectionStream::get_remote_ip_and_port(std::string& ip, int& port) const {
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  if (::getpeername(socket_, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
    describe(addr, ip, port);
}

void ConnectionStream::get_local_ip_and_port(std::string& ip, int& port) const {
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  if (::getsockname(socket_, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
    describe(addr, ip, port);
}

void ConnectionStream::limit_request_bytes(uint64_t max_bytes) {
  num_bytes_allowed_ = max_bytes;
  is_past_limit_ = false;
}

bool ConnectionStream::wait_for_request(std::chrono::milliseconds timeout,
                                        const std::function<bool()>& should_stop) const {
  if (read_begin_ < read_end_) return true;
  const auto deadline = Clock::now() + timeout;
  while (!should_stop()) {
    const auto left =
        std::chrono::duration_cast<std::chrono::microseconds>(deadline - Clock::now());
    if (left <= 0us) return false;
    if (poll_socket(POLLIN, std::min<std::chrono::microseconds>(left, 50ms))) return true;
  }
  return false;
}

void ConnectionStream::drain_and_close_write(uint64_t max_bytes,
                                             std::chrono::milliseconds max_time) {
  ::shutdown(socket_, SHUT_WR);
  const auto deadline = Clock::now() + max_time;
  uint64_t num_dropped = 0;
  while (num_dropped < max_bytes) {
    // A client that paused is not sending a body any more.
    const auto left = std::min<std::chrono::microseconds>(
        std::chrono::duration_cast<std::chrono::microseconds>(deadline - Clock::now()), 250ms);
    if (left <= 0us || !poll_socket(POLLIN, left)) return;
    const ssize_t n = recv_retrying(socket_, read_ahead_.data(), read_ahead_.size(), 0);
    if (n <= 0) return;  // the client finished (or reset): nothing more to drop
    num_dropped += static_cast<uint64_t>(n);
  }
}

}  // namespace sluice
