// Whether the client of a request still listens. A non-streamed request would otherwise not
// notice its client leaving, and would run to the end for nobody. The connection is the one the
// handler's thread serves (HttpExchange); the kernel says whether the client closed its side.
#pragma once

#include <optional>

namespace sluice {

class ClientConnection {
 public:
  // The connection of the request this thread serves; nullopt outside one.
  static std::optional<ClientConnection> of_current_request();

  // True once the client closed the connection (or reset it): nothing more can reach it.
  bool is_closed() const;

 private:
  explicit ClientConnection(int fd) : fd_(fd) {}
  int fd_;  // not owned: HttpServer closes it after the request
};

}  // namespace sluice
