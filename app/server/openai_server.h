// `sluice serve`: an OpenAI-compatible HTTP server (cpp-httplib) in front of one EngineService.
// Handlers parse and check requests with the pure protocol functions (completion_request.h),
// submit them to the service, and write the responses (completion_response.h); no handler
// touches the engine. A client that disconnects mid-stream aborts its request; every error is
// OpenAI-shaped JSON and the server goes on serving.
#pragma once

#include <memory>
#include <string>

#include "app/server/grammar_cache.h"
#include "engine/data/prompt_builder.h"
#include "engine/service/engine_service.h"

namespace httplib {
class Server;
class Request;
class Response;
}  // namespace httplib

namespace sluice {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8000;                // 0: any free port (see bound_port)
  std::string api_key;            // empty: no key needed
  std::string served_model_name;  // the name clients ask for
  SamplingParams defaults;        // for parameters a request leaves out
  bool has_default_seed = false;  // false: a request without "seed" gets a random one
  size_t max_body_bytes = size_t{8} << 20;
  int num_http_threads = 512;  // connections served at once (streams hold one each)
  int write_timeout_s = 10;    // a client that reads nothing for this long is cut off
};

class OpenAiServer {
 public:
  // Serves the service's model under options.served_model_name. Throws Error when the model's
  // chat template does not compile.
  OpenAiServer(std::shared_ptr<EngineService> service, ServerOptions options);
  ~OpenAiServer();

  // Binds the address; returns the port (the chosen one when options.port is 0). Throws Error
  // naming the address when it cannot.
  int bind();
  // Serves until stop() (from any thread). Precondition: bind() succeeded.
  void listen();
  // True from when listen() has started serving until it returns: stop() before then is lost.
  bool is_listening() const;
  void stop();

 private:
  void route();
  void check_key(const httplib::Request& req) const;
  void completions(const httplib::Request& req, httplib::Response& res, bool is_chat);
  void tokenize(const httplib::Request& req, httplib::Response& res);
  void detokenize(const httplib::Request& req, httplib::Response& res);

  std::shared_ptr<EngineService> service_;
  ServerOptions options_;
  int64_t created_ = 0;
  PromptBuilder chat_prompts_;   // the model's chat template
  PromptBuilder plain_prompts_;  // text completions: the prompt as given
  GrammarCache grammars_;        // response_format / structured_outputs, by source
  std::unique_ptr<httplib::Server> http_;
  int listen_socket_ = -1;  // the listening socket, noted when httplib makes it
};

}  // namespace sluice
