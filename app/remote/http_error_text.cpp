#include "app/remote/http_error_text.h"

#include "engine/core/error.h"

namespace sluice {

std::string http_error_text(httplib::Error error) {
  using httplib::Error;
  switch (error) {
    case Error::Success:
      return "no error";
    case Error::Connection:
      return "could not connect: refused, or no server at that address";
    case Error::BindIPAddress:
      return "could not bind the local address";
    case Error::Read:
      return "no answer: the connection closed or timed out while reading";
    case Error::Write:
      return "the connection closed while the request was sent";
    case Error::ExceedRedirectCount:
      return "too many redirects";
    case Error::Canceled:
      return "the request was cancelled";
    case Error::SSLConnection:
      return "the TLS handshake failed";
    case Error::SSLLoadingCerts:
      return "the TLS certificates could not be loaded";
    case Error::SSLServerVerification:
      return "the server's TLS certificate did not verify";
    case Error::Compression:
      return "the answer's compression could not be undone";
    case Error::ConnectionTimeout:
      return "timed out while connecting";
    default:
      break;
  }
  return str_cat("transport error ", static_cast<int>(error), " (", httplib::to_string(error), ")");
}

}  // namespace sluice
