#include "app/server/http_exchange.h"

namespace sluice {

namespace {

// A plain pointer, set and cleared by Scope on the connection's own thread.
thread_local HttpExchange* t_current_exchange = nullptr;

}  // namespace

HttpExchange* HttpExchange::current() {
  return t_current_exchange;
}

HttpExchange::Scope::Scope(HttpExchange& exchange) : previous_(t_current_exchange) {
  t_current_exchange = &exchange;
}

HttpExchange::Scope::~Scope() {
  t_current_exchange = previous_;
}

}  // namespace sluice
