// The connection's bytes (connection_stream.h), on a socket pair: what it read ahead is the next
// request's, its cap counts every byte whichever way it was read, a write to a client that left
// fails, a refused body is drained; and what the connection loop decides from an exchange
// (http_exchange.h, client_connection.h).
#include "app/server/connection_stream.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "app/server/client_connection.h"
#include "app/server/http_exchange.h"

namespace sluice {
namespace {

using namespace std::chrono_literals;

// A connected pair of sockets: server() for the ConnectionStream, client() for the test.
class SocketPair {
 public:
  SocketPair() {
    if (::socketpair(AF_UNIX, SOCK_STREAM, 0, fds_) != 0) ADD_FAILURE() << "socketpair failed";
  }
  ~SocketPair() {
    close_client();
    close_server();
  }
  SocketPair(const SocketPair&) = delete;
  SocketPair& operator=(const SocketPair&) = delete;

  int server() const { return fds_[0]; }
  int client() const { return fds_[1]; }
  void send(const std::string& bytes) const {
    ASSERT_EQ(::send(fds_[1], bytes.data(), bytes.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(bytes.size()));
  }
  void close_client() {
    if (fds_[1] >= 0) ::close(fds_[1]);
    fds_[1] = -1;
  }
  void close_server() {
    if (fds_[0] >= 0) ::close(fds_[0]);
    fds_[0] = -1;
  }

 private:
  int fds_[2] = {-1, -1};
};

ConnectionStream stream_on(const SocketPair& sockets) {
  return ConnectionStream(sockets.server(), 1s, 1s);
}

// Reads a head as httplib does, a byte at a time up to the empty line; "" when a read fails.
std::string read_head(ConnectionStream& stream) {
  std::string head;
  char c = 0;
  while (head.size() < 4 || head.compare(head.size() - 4, 4, "\r\n\r\n") != 0) {
    if (stream.read(&c, 1) != 1) return "";
    head += c;
  }
  return head;
}

const auto kNeverStop = [] { return false; };

// Issue 27 item 8: httplib's per-request stream read the second of two requests sent in one
// packet into a buffer that died with the first, and the connection then idled. The read-ahead
// here is the next request's start: the connection loop sees it waiting without a byte more on
// the socket, and reads it whole.
TEST(ConnectionStream, WhatItReadAheadIsTheNextRequest) {
  SocketPair sockets;
  ConnectionStream stream = stream_on(sockets);
  const std::string first = "GET /health HTTP/1.1\r\nHost: a\r\n\r\n";
  const std::string second = "GET /v1/models HTTP/1.1\r\nHost: a\r\n\r\n";
  sockets.send(first + second);
  stream.limit_request_bytes(1 << 16);
  EXPECT_EQ(read_head(stream), first);
  // Everything was read from the socket with the first byte; the second request waits in memory.
  EXPECT_TRUE(stream.wait_for_request(0ms, kNeverStop));
  EXPECT_TRUE(stream.is_readable());
  stream.limit_request_bytes(1 << 16);
  EXPECT_EQ(read_head(stream), second);
  EXPECT_FALSE(stream.wait_for_request(0ms, kNeverStop));  // nothing more was sent
}

// A request may read only so many bytes: its head, then its body. Past the cap every read fails
// and says so, whether the bytes came from the read-ahead or a large read went straight to the
// socket; the next request's cap starts afresh and the bytes held back are still there.
TEST(ConnectionStream, TheCapCountsEveryByteAndStartsAfreshPerRequest) {
  SocketPair sockets;
  ConnectionStream stream = stream_on(sockets);
  std::string bytes;
  for (int i = 0; i < 100; ++i) bytes += static_cast<char>('a' + i % 26);
  sockets.send(bytes);
  stream.limit_request_bytes(10);
  char buffer[64] = {};
  std::string read;
  for (ssize_t n = 0; (n = stream.read(buffer, sizeof(buffer))) > 0;) read.append(buffer, n);
  EXPECT_EQ(read, bytes.substr(0, 10));
  EXPECT_TRUE(stream.is_past_limit());
  stream.limit_request_bytes(50);
  EXPECT_FALSE(stream.is_past_limit());
  read.clear();
  for (ssize_t n = 0; (n = stream.read(buffer, sizeof(buffer))) > 0;) read.append(buffer, n);
  EXPECT_EQ(read, bytes.substr(10, 50));
  EXPECT_TRUE(stream.is_past_limit());

  // A read of 16 KiB or more bypasses the read-ahead; it is capped all the same.
  SocketPair large_sockets;
  ConnectionStream large = stream_on(large_sockets);
  std::thread sender([&] { large_sockets.send(std::string(100000, 'x')); });
  large.limit_request_bytes(20000);
  std::vector<char> big(1 << 16);
  size_t num_read = 0;
  for (ssize_t n = 0; (n = large.read(big.data(), big.size())) > 0;)
    num_read += static_cast<size_t>(n);
  EXPECT_EQ(num_read, 20000u);
  EXPECT_TRUE(large.is_past_limit());
  large.limit_request_bytes(100000 - 20000);
  for (ssize_t n = 0; num_read < 100000 && (n = large.read(big.data(), big.size())) > 0;)
    num_read += static_cast<size_t>(n);
  EXPECT_EQ(num_read, 100000u);
  sender.join();
}

// A stream answer to a client that left must stop (the server then aborts the request); one to a
// client whose next request is already waiting must not.
TEST(ConnectionStream, AWriteToAClientThatLeftFails) {
  SocketPair sockets;
  ConnectionStream stream = stream_on(sockets);
  EXPECT_TRUE(stream.is_writable());
  const std::string pipelined = "GET /health HTTP/1.1\r\n\r\n";
  sockets.send(pipelined);  // the next request, not read yet
  EXPECT_TRUE(stream.is_writable());
  EXPECT_EQ(stream.write("ok", 2), 2);
  EXPECT_EQ(stream.num_bytes_written(), 2u);
  stream.limit_request_bytes(1 << 16);
  EXPECT_EQ(read_head(stream), pipelined);
  sockets.close_client();
  EXPECT_FALSE(stream.is_writable());
  EXPECT_EQ(stream.write("more", 4), -1);
  EXPECT_EQ(stream.num_bytes_written(), 2u);
}

// A write far larger than the socket's buffers, to a client that reads nothing: it takes what
// fits and fails after the write timeout, however much is left (a blocking send of it all waited
// for the client for ever, so the server never cut off a stream nobody read).
TEST(ConnectionStream, AWriteToAClientThatReadsNothingFailsAfterTheTimeout) {
  SocketPair sockets;
  ConnectionStream stream(sockets.server(), 1s, 200ms);
  const std::string answer(size_t{64} << 20, 'x');
  std::atomic<bool> has_returned = false;
  std::thread writer([&] {
    size_t offset = 0;
    ssize_t n = 0;
    while (offset < answer.size() &&
           (n = stream.write(answer.data() + offset, answer.size() - offset)) > 0)
      offset += static_cast<size_t>(n);
    EXPECT_LT(offset, answer.size());
    EXPECT_EQ(n, -1);
    has_returned = true;
  });
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (!has_returned && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(10ms);
  EXPECT_TRUE(has_returned) << "the write still waits for a client that reads nothing";
  if (!has_returned) ::shutdown(sockets.client(), SHUT_RDWR);  // ends a blocked send
  writer.join();
}

TEST(ConnectionStream, WaitingForARequestEndsWhenTheServerStops) {
  SocketPair sockets;
  const ConnectionStream stream = stream_on(sockets);
  const auto begin = std::chrono::steady_clock::now();
  EXPECT_FALSE(stream.wait_for_request(60s, [] { return true; }));
  EXPECT_LT(std::chrono::steady_clock::now() - begin, 10s);
  sockets.send("G");
  EXPECT_TRUE(stream.wait_for_request(60s, kNeverStop));
}

// After refusing a body from its head the server closes its side and drops what the client
// still sends, so that the client reads the answer (closing with unread bytes would reset the
// connection) — but only up to a limit: a client sending without end cannot keep it.
TEST(ConnectionStream, ARefusedBodyIsDrainedUpToItsLimit) {
  SocketPair sockets;
  ConnectionStream stream = stream_on(sockets);
  std::thread sender([&] { sockets.send(std::string(1 << 20, 'b')); });
  stream.drain_and_close_write(uint64_t{8} << 20, 10s);
  sender.join();  // every byte was taken: the sender was never stuck on a full socket
  char byte = 0;
  EXPECT_EQ(::recv(sockets.client(), &byte, 1, 0), 0) << "the server's side is not closed";

  SocketPair endless;
  ConnectionStream endless_stream = stream_on(endless);
  std::atomic<bool> is_sending{true};
  std::thread flood([&] {
    const std::string chunk(1 << 16, 'c');
    while (::send(endless.client(), chunk.data(), chunk.size(), MSG_NOSIGNAL) > 0) {
    }
    is_sending = false;
  });
  endless_stream.drain_and_close_write(1 << 18, 60s);
  EXPECT_TRUE(is_sending.load()) << "it drained until the client stopped, not to its limit";
  endless.close_server();  // the flood's next send fails
  flood.join();
}

// Whether the bytes after a response start the next request: only when its head was admitted
// and its body, if any, read to the end (else they would be read as a request: smuggling).
TEST(HttpExchange, KeepsTheConnectionOnlyAfterAWholeAdmittedRequest) {
  HttpExchange exchange;
  EXPECT_FALSE(exchange.can_keep_alive());  // refused from its head
  exchange.is_admitted = true;
  EXPECT_TRUE(exchange.can_keep_alive());  // no body
  exchange.framing = {BodyFraming::Kind::Length, 5};
  EXPECT_FALSE(exchange.can_keep_alive());  // a body not read
  exchange.is_body_read = true;
  EXPECT_TRUE(exchange.can_keep_alive());
  exchange.framing = {BodyFraming::Kind::Chunked, 0};
  EXPECT_TRUE(exchange.can_keep_alive());
  exchange.is_body_read = false;
  EXPECT_FALSE(exchange.can_keep_alive());
  exchange.framing = {BodyFraming::Kind::Length, 0};
  EXPECT_TRUE(exchange.can_keep_alive());  // Content-Length 0 has no body to read
  exchange.must_close = true;
  EXPECT_FALSE(exchange.can_keep_alive());
}

TEST(HttpExchange, IsTheCurrentOneForItsScopeOnItsThread) {
  EXPECT_EQ(HttpExchange::current(), nullptr);
  EXPECT_FALSE(ClientConnection::of_current_request().has_value());
  HttpExchange outer;
  {
    const HttpExchange::Scope outer_scope(outer);
    EXPECT_EQ(HttpExchange::current(), &outer);
    HttpExchange inner;
    {
      const HttpExchange::Scope inner_scope(inner);
      EXPECT_EQ(HttpExchange::current(), &inner);
    }
    EXPECT_EQ(HttpExchange::current(), &outer);
    std::thread([] { EXPECT_EQ(HttpExchange::current(), nullptr); }).join();
  }
  EXPECT_EQ(HttpExchange::current(), nullptr);
}

// A non-streamed answer notices its client left (then its request is aborted, not run for
// nobody); a client that sent its next request is still there.
TEST(ClientConnection, SaysWhenTheClientOfTheCurrentRequestLeft) {
  SocketPair sockets;
  ConnectionStream stream = stream_on(sockets);
  HttpExchange exchange;
  exchange.stream = &stream;
  const HttpExchange::Scope scope(exchange);
  const auto connection = ClientConnection::of_current_request();
  ASSERT_TRUE(connection.has_value());
  EXPECT_FALSE(connection->is_closed());
  sockets.send("GET /health HTTP/1.1\r\n\r\n");
  EXPECT_FALSE(connection->is_closed());
  sockets.close_client();
  EXPECT_TRUE(connection->is_closed());
}

}  // namespace
}  // namespace sluice
