// The loaded model served over HTTP from the app ("Serve on port …"): an OpenAiServer in front of
// the EngineService the app's jobs use, so HTTP requests and a job's rows batch together in one
// engine. It listens on a thread of its own; made means bound and serving, destroyed means
// stopped and joined.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "app/server/openai_server.h"

namespace sluice {

class ServedModel {
 public:
  // Binds options.host:options.port (0: any free port) and starts serving on a new thread.
  // Throws Error naming the address and port when it cannot bind (in use, not an address of
  // this machine), or when the model's chat template does not compile.
  ServedModel(std::shared_ptr<EngineService> service, const ServerOptions& options);
  // Stops listening and joins the thread (requests in flight are answered first).
  ~ServedModel();
  ServedModel(const ServedModel&) = delete;
  ServedModel& operator=(const ServedModel&) = delete;

  // The port bound (the chosen one when options.port was 0).
  int port() const { return m_port; }
  const ServerOptions& options() const { return m_options; }
  const std::shared_ptr<EngineService>& service() const { return m_service; }
  // Returns the base URL of the API: http://HOST:PORT/v1.
  std::string baseUrl() const;

 private:
  std::shared_ptr<EngineService> m_service;
  ServerOptions m_options;
  OpenAiServer m_server;
  int m_port = 0;
  std::atomic<bool> m_hasListenReturned{false};
  std::thread m_thread;  // last: started once everything above is built
};

}  // namespace sluice
