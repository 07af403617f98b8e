// `sluice serve`: an OpenAI-compatible HTTP server (cpp-httplib) in front of one EngineService.
// Handlers parse and check requests with the pure protocol functions (completion_request.h),
// submit them to the service, and write the responses (completion_response.h); no handler
// touches the engine. A client that disconnects mid-stream aborts its request; every error is
// OpenAI-shaped JSON and the server goes on serving. Every request passes a gate on its head
// before its body is read (request_gate.h), its body and its answer are capped and share budgets
// with the other requests in flight (in_flight_budget.h, response_budget.h), and connections are
// served by HttpServer's own loop (pipelining, a cap on each head).
#pragma once

#include <memory>
#include <string>

#include "app/server/in_flight_budget.h"
#include "engine/input/prompt_builder.h"
#include "engine/service/engine_service.h"

namespace httplib {
struct Request;
struct Response;
class ContentReader;
}  // namespace httplib

namespace sluice {

class HttpServer;
class RequestGroup;
class WholeResponse;
struct CompletionRequest;

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8000;                    // 0: any free port (see bound_port)
  std::string api_key;                // empty: no key needed
  bool is_metrics_protected = false;  // /metrics needs the API key too
  std::string served_model_name;      // the name clients ask for
  SamplingParams defaults;            // for parameters a request leaves out
  std::string chat_template;          // template source replacing the model's own; "": the model's
  // A thinking model's reasoning: the controls of requests that do not give their own
  // (reasoning_effort, chat_template_kwargs.enable_thinking).
  ReasoningControls reasoning;
  // The options of response_format / structured_outputs JSON grammars whose request does not give
  // its own schema_mode / json_whitespace.
  JsonGrammarOptions json_grammar;
  bool has_default_seed = false;  // false: a request without "seed" gets a random one
  size_t max_body_bytes = size_t{8} << 20;
  // Bytes of request bodies that the requests being read and parsed hold together at most.
  uint64_t max_body_bytes_in_flight = uint64_t{16} << 20;
  // An answer's tokens and top log-probabilities (response_budget.h): one request's at most, and
  // all requests' in flight together at most.
  uint64_t max_response_entries = uint64_t{1} << 20;
  uint64_t max_response_entries_in_flight = uint64_t{1} << 22;
  int num_http_threads = 512;  // connections served at once (streams hold one each)
  int write_timeout_s = 10;    // a client that reads nothing for this long is cut off
};

// True for an address only this machine can reach (127.0.0.0/8, ::1, localhost).
bool is_loopback_host(const std::string& host);

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
  // Sets httplib's hooks around every request: the gate (admit), OpenAI-shaped errors for what
  // httplib refuses itself, and Connection: close on a response after which the connection ends.
  void install_hooks();
  void route();
  // The gate every request passes on its head alone (request_gate.h): its body's framing, its
  // route, the API key, the body's size. Returns false with res set to the refusal.
  bool admit(const httplib::Request& req, httplib::Response& res) const;
  bool needs_key(const std::string& method, const std::string& path) const;
  // The body of a request, and the share of the body budget it holds until dropped.
  struct RequestBody {
    std::string text;
    InFlightBudget::Reservation reservation;
  };
  // Returns the body of an admitted request, read to its end. Throws ApiError 413 past
  // max_body_bytes (counted as read, chunked or compressed), 503 past the bodies' budget, 400 for
  // a body cut short.
  RequestBody read_body(const httplib::Request& req, const httplib::ContentReader& reader) const;
  void completions(RequestBody body, httplib::Response& res, bool is_chat);
  // completions()' steps. Returns the body parsed into a request for the served model (the body,
  // and its share of the bodies' budget, go back on return); throws ApiError 400 or 404.
  CompletionRequest parse_completion(RequestBody body, bool is_chat) const;
  // The prompts of a request: each one's token ids, checked against the context, and how the
  // engine treats their reasoning (a chat prompt's, from the chat template and the controls).
  struct RequestPrompts {
    std::vector<std::vector<int32_t>> token_ids;
    ReasoningParams reasoning;
  };
  RequestPrompts prompt_ids(const CompletionRequest& r, bool is_chat) const;
  // Returns the answer's share of the answers' budget, held until the answer is written. Throws
  // ApiError 400 for an answer past max_response_entries, 503 past the budget.
  std::shared_ptr<InFlightBudget::Reservation> reserve_answer(
      const CompletionRequest& r, const std::vector<std::vector<int32_t>>& prompts) const;
  // Submits one request per prompt (the grammar's source with each; the service compiles it).
  // Throws QueueFull, ApiError 400 naming the grammar's parameter when it does not compile.
  std::unique_ptr<RequestGroup> submit(const CompletionRequest& r, RequestPrompts prompts) const;
  // Waits for a whole answer and sets res to it (499 when the client left meanwhile).
  void answer_whole(std::unique_ptr<RequestGroup> group, WholeResponse answer,
                    std::shared_ptr<void> reservation, httplib::Response& res) const;
  void tokenize(const std::string& text, httplib::Response& res);
  void detokenize(const std::string& text, httplib::Response& res);

  std::shared_ptr<EngineService> service_;
  ServerOptions options_;
  int64_t created_ = 0;
  PromptBuilder chat_prompts_;                     // the model's chat template
  PromptBuilder plain_prompts_;                    // text completions: the prompt as given
  std::shared_ptr<InFlightBudget> body_budget_;    // bytes of bodies being read and parsed
  std::shared_ptr<InFlightBudget> answer_budget_;  // entries of answers (response_budget.h)
  std::unique_ptr<HttpServer> http_;
  int listen_socket_ = -1;  // the listening socket, noted when httplib makes it
};

}  // namespace sluice
