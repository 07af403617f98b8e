// One request on a connection, as the connection loop (HttpServer) and the handlers that run for
// it share it. httplib hands a handler the request and the response but not the connection, and
// runs all of a connection's requests, handlers included, on one pool thread; so a handler reaches
// the exchange it serves through this thread's pointer, HttpExchange::current().
#pragma once

#include "app/server/request_gate.h"

namespace sluice {

class ConnectionStream;

struct HttpExchange {
  ConnectionStream* stream = nullptr;
  bool is_admitted = false;  // the head passed the gate: framing holds the body's framing
  BodyFraming framing;
  bool is_body_read = false;       // the body was read to its end: the next request starts after it
  bool must_close = false;         // the connection ends after this response (the gate refused it)
  bool wants_memory_trim = false;  // the request held much memory: give it back once answered

  // True when the next bytes on the connection are the next request's: the head was admitted
  // and its body (if any) read to the end.
  bool can_keep_alive() const {
    return is_admitted && !must_close && (!framing.has_body() || is_body_read);
  }

  // The exchange this thread serves; null outside one (a handler called by a test).
  static HttpExchange* current();

  // Makes exchange this thread's current one for the scope's life.
  class Scope {
   public:
    explicit Scope(HttpExchange& exchange);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    HttpExchange* previous_;
  };
};

}  // namespace sluice
