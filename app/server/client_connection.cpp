#include "app/server/client_connection.h"

#include <poll.h>
#include <sys/socket.h>

#include "app/server/connection_stream.h"
#include "app/server/http_exchange.h"

namespace sluice {

std::optional<ClientConnection> ClientConnection::of_current_request() {
  const HttpExchange* exchange = HttpExchange::current();
  if (!exchange || !exchange->stream) return std::nullopt;
  return ClientConnection(exchange->stream->socket());
}

bool ClientConnection::is_closed() const {
  pollfd p{};
  p.fd = fd_;
  p.events = POLLIN | POLLRDHUP;
  if (poll(&p, 1, 0) <= 0) return false;  // nothing to read and no hang-up: still there
  if (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) return true;
  // Readable: either the next pipelined request (still there) or the end of the stream.
  char byte = 0;
  return recv(fd_, &byte, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}

}  // namespace sluice
