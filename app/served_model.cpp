#include "app/served_model.h"

#include <chrono>

#include "engine/core/error.h"

namespace sluice {

namespace {

int bindOrFail(OpenAiServer& server, const ServerOptions& options) {
  try {
    return server.bind();
  } catch (const Error&) {
    if (options.port == 0) fail("cannot serve on ", options.host, ": no free port to listen on");
    fail("cannot serve on ", options.host, ":", options.port,
         ": the port is in use, or the address is not one of this machine's");
  }
}

}  // namespace

ServedModel::ServedModel(std::shared_ptr<EngineService> service, const ServerOptions& options)
    : m_service(std::move(service)),
      m_options(options),
      m_server(m_service, m_options),
      m_port(bindOrFail(m_server, m_options)),
      m_thread([this] {
        m_server.listen();
        m_hasListenReturned.store(true);
      }) {}

ServedModel::~ServedModel() {
  // A stop() before listen() has started serving is lost (httplib): wait until it serves, or
  // has given up.
  while (!m_server.is_listening() && !m_hasListenReturned.load())
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  m_server.stop();
  m_thread.join();
}

std::string ServedModel::baseUrl() const {
  return str_cat("http://", m_options.host, ":", m_port, "/v1");
}

}  // namespace sluice
