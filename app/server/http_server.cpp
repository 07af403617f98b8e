#include "app/server/http_server.h"

#include <sys/socket.h>
#include <unistd.h>

#include "app/server/api_error.h"
#include "app/server/completion_response.h"
#include "app/server/connection_stream.h"
#include "app/server/http_exchange.h"
#include "app/server/server_memory.h"
#include "engine/core/error.h"

namespace sluice {

namespace {

std::chrono::microseconds to_duration(time_t sec, time_t usec) {
  return std::chrono::seconds(sec) + std::chrono::microseconds(usec);
}

}  // namespace

bool HttpServer::process_and_close_socket(socket_t sock) {
  ConnectionStream stream(sock, to_duration(read_timeout_sec_, read_timeout_usec_),
                          to_duration(write_timeout_sec_, write_timeout_usec_));
  const auto is_stopping = [this] { return svr_sock_ == INVALID_SOCKET; };
  bool ok = false;
  bool should_drain = false;
  for (size_t num_left = keep_alive_max_count_; num_left > 0; --num_left) {
    if (!stream.wait_for_request(std::chrono::seconds(keep_alive_timeout_sec_), is_stopping)) break;
    HttpExchange exchange;
    exchange.stream = &stream;
    const HttpExchange::Scope scope(exchange);
    stream.limit_request_bytes(limits_.max_head_bytes);
    const uint64_t num_written_before = stream.num_bytes_written();
    bool connection_closed = false;
    ok = process_request(stream, num_left == 1, connection_closed, nullptr);
    const bool is_head_too_large =
        !ok && stream.is_past_limit() && stream.num_bytes_written() == num_written_before;
    if (is_head_too_large) answer_head_too_large(stream);
    // The response (and whatever the handler held for it) is gone by now.
    if (exchange.wants_memory_trim) release_free_memory();
    if (!ok || connection_closed || !exchange.can_keep_alive()) {
      // Bytes the client sent that were never read: let it read the answer before the close.
      should_drain = (ok && !exchange.can_keep_alive()) || is_head_too_large;
      break;
    }
  }
  if (should_drain) stream.drain_and_close_write(limits_.max_drain_bytes, limits_.max_drain_time);
  ::shutdown(sock, SHUT_RDWR);
  ::close(sock);
  return ok;
}

void HttpServer::answer_head_too_large(ConnectionStream& stream) const {
  const std::string body = dump_body(error_json(head_too_large(limits_.max_head_bytes)));
  const std::string response = str_cat(
      "HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: application/json\r\n"
      "Content-Length: ",
      body.size(), "\r\nConnection: close\r\n\r\n", body);
  size_t offset = 0;
  while (offset < response.size()) {
    const ssize_t n = stream.write(response.data() + offset, response.size() - offset);
    if (n <= 0) return;
    offset += static_cast<size_t>(n);
  }
}

}  // namespace sluice
