// Whether the client of a request still listens. cpp-httplib (0.11) gives a handler no access to
// its connection, so a non-streaming request could not notice its client leaving and would run
// to the end for nobody. This finds the request's socket among the process's descriptors by its
// two addresses (the server's and the client's, which httplib records in the request) and asks
// the kernel whether the client has closed its side. Linux only; where the socket cannot be
// found the connection is taken to be open.
#pragma once

#include <optional>
#include <string>

namespace sluice {

class ClientConnection {
 public:
  // Finds the connected socket whose local and peer addresses are these; nullopt when none is.
  static std::optional<ClientConnection> find(const std::string& local_addr, int local_port,
                                              const std::string& remote_addr, int remote_port);

  // True once the client closed the connection (or reset it): nothing more can reach it.
  bool is_closed() const;

 private:
  explicit ClientConnection(int fd) : fd_(fd) {}
  int fd_;  // not owned: httplib closes it after the handler returns
};

}  // namespace sluice
