#include "app/server/client_connection.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <cstdlib>
#include <cstring>

namespace sluice {

namespace {

// The address and port of a socket address, as httplib writes them ("127.0.0.1", "::1").
bool describe(const sockaddr_storage& addr, std::string& ip, int& port) {
  char text[INET6_ADDRSTRLEN] = {};
  if (addr.ss_family == AF_INET) {
    const auto& a = reinterpret_cast<const sockaddr_in&>(addr);
    if (!inet_ntop(AF_INET, &a.sin_addr, text, sizeof(text))) return false;
    port = ntohs(a.sin_port);
  } else if (addr.ss_family == AF_INET6) {
    const auto& a = reinterpret_cast<const sockaddr_in6&>(addr);
    if (!inet_ntop(AF_INET6, &a.sin6_addr, text, sizeof(text))) return false;
    port = ntohs(a.sin6_port);
  } else {
    return false;
  }
  ip = text;
  return true;
}

bool has_addresses(int fd, const std::string& local_addr, int local_port,
                   const std::string& remote_addr, int remote_port) {
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  std::string ip;
  int port = -1;
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return false;
  if (!describe(addr, ip, port) || port != remote_port || ip != remote_addr) return false;
  len = sizeof(addr);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return false;
  return describe(addr, ip, port) && port == local_port && ip == local_addr;
}

}  // namespace

std::optional<ClientConnection> ClientConnection::find(const std::string& local_addr,
                                                       int local_port,
                                                       const std::string& remote_addr,
                                                       int remote_port) {
  if (local_port <= 0 || remote_port <= 0) return std::nullopt;
  DIR* dir = opendir("/proc/self/fd");
  if (!dir) return std::nullopt;
  std::optional<ClientConnection> found;
  while (const dirent* entry = readdir(dir)) {
    char* end = nullptr;
    const long fd = std::strtol(entry->d_name, &end, 10);
    if (end == entry->d_name || *end != '\0' || fd < 0) continue;
    struct stat st {};
    if (fstat(static_cast<int>(fd), &st) != 0 || !S_ISSOCK(st.st_mode)) continue;
    if (has_addresses(static_cast<int>(fd), local_addr, local_port, remote_addr, remote_port)) {
      found = ClientConnection(static_cast<int>(fd));
      break;
    }
  }
  closedir(dir);
  return found;
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
