#include "app/server/openai_server.h"

#include <httplib.h>
#include <sys/socket.h>

#include <ctime>
#include <optional>
#include <random>

#include "app/server/api_error.h"
#include "app/server/client_connection.h"
#include "app/server/completion_request.h"
#include "app/server/completion_response.h"
#include "app/server/connection_stream.h"
#include "app/server/http_exchange.h"
#include "app/server/http_server.h"
#include "app/server/prometheus_metrics.h"
#include "app/server/request_gate.h"
#include "app/server/request_group.h"
#include "app/server/response_budget.h"
#include "app/server/server_memory.h"
#include "app/server/stream_response.h"
#include "app/server/whole_response.h"
#include "engine/core/error.h"
#include "engine/input/dataset_reader.h"

namespace sluice {

namespace {

using Json = nlohmann::json;
using namespace std::chrono_literals;

// A request whose answer may hold this many entries, or whose body is this large, has the
// allocator give its free memory back once it is answered.
constexpr uint64_t kTrimAfterEntries = uint64_t{1} << 16;
constexpr size_t kTrimAfterBodyBytes = size_t{1} << 20;

void send_json(httplib::Response& res, int status, const Json& body) {
  res.status = status;
  res.set_content(dump_body(body), "application/json");
}

void send_error(httplib::Response& res, const ApiError& error) {
  send_json(res, error.status(), error_json(error));
}

// Runs a handler, turning every failure into an OpenAI-shaped error response.
template <typename Handler>
void guarded(httplib::Response& res, Handler&& handler) {
  try {
    handler();
  } catch (const ApiError& e) {
    send_error(res, e);
  } catch (const QueueFull& e) {
    send_error(res, overloaded(e.what()));
  } catch (const std::exception& e) {
    send_error(res, internal_error(e.what()));
  }
}

std::string random_id(const char* prefix) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id = prefix;
  for (int i = 0; i < 24; ++i) id += kHex[rng() % 16];
  return id;
}

uint64_t random_seed() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return rng();
}

// Text completions' builder has no chat template and no reasoning format: their text is the whole
// output (vLLM, too, splits the reasoning out of chat answers only).
PromptBuilder make_builder(const EngineService& service, const ServerOptions& options,
                           bool use_chat_template) {
  const ModelSession& session = service.session();
  PromptOptions prompt{.use_chat_template = use_chat_template};
  if (use_chat_template) {
    prompt.chat_template = options.chat_template;
    prompt.reasoning = options.reasoning;
  }
  PromptBuilder builder(prompt, session.model->chat_template, *session.tokenizer,
                        DatasetFormat::OpenAiChat, {}, session.model->chat_template_origin);
  builder.set_max_model_len(service.max_model_len());
  return builder;
}

std::vector<std::string> header_values(const httplib::Request& req, const char* name) {
  std::vector<std::string> values;
  const auto [begin, end] = req.headers.equal_range(name);
  for (auto it = begin; it != end; ++it) values.push_back(it->second);
  return values;
}

// The routes: a request for anything else is answered 404 from its head.
struct Route {
  const char* method;
  const char* path;
};
constexpr Route kRoutes[] = {
    {"GET", "/health"},
    {"GET", "/metrics"},
    {"GET", "/v1/models"},
    {"POST", "/v1/completions"},
    {"POST", "/v1/chat/completions"},
    {"POST", "/tokenize"},
    {"POST", "/detokenize"},
};

bool is_route(const std::string& method, const std::string& path) {
  const std::string as = method == "HEAD" ? "GET" : method;  // httplib answers HEAD as GET
  for (const Route& route : kRoutes) {
    if (as == route.method && path == route.path) return true;
  }
  return false;
}

}  // namespace

bool is_loopback_host(const std::string& host) {
  return host == "localhost" || host == "::1" || host == "[::1]" || host.rfind("127.", 0) == 0;
}

OpenAiServer::OpenAiServer(std::shared_ptr<EngineService> service, ServerOptions options)
    : service_(std::move(service)),
      options_(std::move(options)),
      created_(static_cast<int64_t>(std::time(nullptr))),
      chat_prompts_(make_builder(*service_, options_, true)),
      plain_prompts_(make_builder(*service_, options_, false)),
      body_budget_(std::make_shared<InFlightBudget>(options_.max_body_bytes_in_flight,
                                                    "bytes of request bodies",
                                                    "--max-body-bytes-in-flight")),
      answer_budget_(std::make_shared<InFlightBudget>(options_.max_response_entries_in_flight,
                                                      "tokens and log-probabilities of answers",
                                                      "--max-response-entries-in-flight")),
      http_(std::make_unique<HttpServer>(HttpServer::Limits{
          .max_drain_bytes = std::max<uint64_t>(uint64_t{4} * options_.max_body_bytes, 1 << 20)})) {
  // The thresholds take effect now; the arena cap only when no thread has an arena yet (the
  // CLI calls this first; in the app the cap comes too late and the trimming does the work).
  tune_malloc_for_serving(kMaxServerMallocArenas);
  const int num_threads = options_.num_http_threads;
  http_->new_task_queue = [num_threads] {
    return new httplib::ThreadPool(static_cast<size_t>(num_threads));
  };
  http_->set_payload_max_length(options_.max_body_bytes);
  http_->set_write_timeout(options_.write_timeout_s, 0);
  // A stream is many small writes: without TCP_NODELAY each waits for the client's delayed ACK
  // (40 ms) on a kept-alive connection.
  http_->set_tcp_nodelay(true);
  // httplib listens with a backlog of 5, which drops connections when hundreds of clients
  // connect at once; bind() raises it on the socket noted here. Its default options also set
  // SO_REUSEPORT, with which a second server on the same port binds too and the kernel splits
  // the connections between them: only SO_REUSEADDR here, so a port in use is an error.
  http_->set_socket_options([this](socket_t sock) {
    const int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    listen_socket_ = static_cast<int>(sock);
  });
  install_hooks();
  route();
}

OpenAiServer::~OpenAiServer() = default;

int OpenAiServer::bind() {
  int port = options_.port;
  if (port == 0) {
    port = http_->bind_to_any_port(options_.host);
    if (port < 0) fail("sluice serve: cannot listen on ", options_.host);
  } else if (!http_->bind_to_port(options_.host, port)) {
    fail("sluice serve: cannot listen on ", options_.host, ":", port,
         " (in use, or not an address of this machine)");
  }
  // Listening again only changes the backlog (Linux); at worst the small one stays.
  if (listen_socket_ >= 0) ::listen(listen_socket_, SOMAXCONN);
  return port;
}

void OpenAiServer::listen() {
  http_->listen_after_bind();
}

bool OpenAiServer::is_listening() const {
  return http_->is_running();
}

void OpenAiServer::stop() {
  http_->stop();
}

bool OpenAiServer::needs_key(const std::string& method, const std::string& path) const {
  if (options_.api_key.empty() || path == "/health") return false;  // probes need no key
  return !(path == "/metrics" && (method == "GET" || method == "HEAD")) ||
         options_.is_metrics_protected;
}

bool OpenAiServer::admit(const httplib::Request& req, httplib::Response& res) const {
  HttpExchange* exchange = HttpExchange::current();
  try {
    const BodyFraming framing = read_body_framing(header_values(req, "Content-Length"),
                                                  header_values(req, "Transfer-Encoding"));
    if (exchange) {
      exchange->framing = framing;
      exchange->is_admitted = true;
    }
    if (!is_route(req.method, req.path)) throw route_not_found(req.method, req.path);
    if (needs_key(req.method, req.path) &&
        !is_authorized(req.get_header_value("Authorization"), options_.api_key))
      throw unauthorized();
    check_body_size(framing, options_.max_body_bytes);
    // The body may now be read: its bytes, or a chunked body's bytes and framing, at most.
    if (exchange && exchange->stream) {
      exchange->stream->limit_request_bytes(
          framing.kind == BodyFraming::Kind::Chunked
              ? options_.max_body_bytes + max_chunked_framing_bytes(options_.max_body_bytes)
              : framing.length);
    }
    return true;
  } catch (const ApiError& e) {
    send_error(res, e);
    // Framing that cannot be trusted leaves no way to find the next request.
    if (exchange && !exchange->is_admitted) exchange->must_close = true;
    return false;
  }
}

OpenAiServer::RequestBody OpenAiServer::read_body(const httplib::Request& req,
                                                  const httplib::ContentReader& reader) const {
  HttpExchange* exchange = HttpExchange::current();
  const BodyFraming framing = exchange ? exchange->framing
                                       : read_body_framing(header_values(req, "Content-Length"),
                                                           header_values(req, "Transfer-Encoding"));
  RequestBody body;
  // A request with neither header has no body (RFC 9112 §6.3); httplib would read to the end of
  // the connection.
  if (!framing.has_body()) {
    if (exchange) exchange->is_body_read = true;
    return body;
  }
  // A body of known length is reserved whole before it is read; a chunked one as it arrives.
  if (framing.kind == BodyFraming::Kind::Length) {
    body.reservation = InFlightBudget::reserve(body_budget_, framing.length);
    body.text.reserve(framing.length);
  } else {
    body.reservation = InFlightBudget::reserve(body_budget_, 0);
  }
  bool is_too_large = false;
  std::optional<ApiError> refusal;
  const bool is_read = reader([&](const char* data, size_t size) {
    // Counted as decoded: a chunked or compressed body stops at the limit too.
    if (body.text.size() + size > options_.max_body_bytes) {
      is_too_large = true;
      return false;
    }
    try {
      if (body.text.size() + size > body.reservation.num_units())
        body.reservation.grow(body.text.size() + size - body.reservation.num_units());
    } catch (const ApiError& e) {
      refusal = e;
      return false;
    }
    body.text.append(data, size);
    return true;
  });
  const bool is_past_framing_limit =
      exchange && exchange->stream && exchange->stream->is_past_limit();
  if (is_too_large || is_past_framing_limit) throw body_too_large(options_.max_body_bytes);
  if (refusal) throw *refusal;
  if (!is_read)
    throw bad_request("",
                      "the request body could not be read: it ended early, or its chunks or "
                      "encoding are malformed");
  if (exchange) {
    exchange->is_body_read = true;
    exchange->wants_memory_trim |= body.text.size() >= kTrimAfterBodyBytes;
  }
  return body;
}

void OpenAiServer::install_hooks() {
  // Errors httplib answers itself (a head it cannot parse) get the OpenAI body too.
  const httplib::Server::HandlerWithResponse on_error = [this](const httplib::Request& req,
                                                               httplib::Response& res) {
    if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
    const HttpExchange* exchange = HttpExchange::current();
    if (exchange && exchange->stream && exchange->stream->is_past_limit() &&
        !exchange->is_admitted) {
      send_error(res, head_too_large(http_->max_head_bytes()));
    } else if (res.status == 413) {
      send_error(res, body_too_large(options_.max_body_bytes));
    } else if (res.status == 404) {
      send_error(res, route_not_found(req.method, req.path));
    } else {
      send_error(res, ApiError(res.status, "invalid_request_error", "bad_request", "",
                               str_cat("the request could not be read (HTTP ", res.status, ")")));
    }
    return httplib::Server::HandlerResponse::Handled;
  };
  http_->set_error_handler(on_error);
  http_->set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    return admit(req, res) ? httplib::Server::HandlerResponse::Unhandled
                           : httplib::Server::HandlerResponse::Handled;
  });
  // A client that asks before sending its body hears a refusal without sending it.
  http_->set_expect_100_continue_handler(
      [this](const httplib::Request& req, httplib::Response& res) {
        return admit(req, res) ? 100 : res.status;
      });
  // A response after which the connection closes says so (httplib would offer keep-alive); a
  // refusal written before routing (Expect: 100-continue) gets its Content-Length here.
  http_->set_post_routing_handler([](const httplib::Request&, httplib::Response& res) {
    const HttpExchange* exchange = HttpExchange::current();
    if (exchange && !exchange->can_keep_alive()) {
      res.headers.erase("Keep-Alive");
      res.set_header("Connection", "close");
    }
    if (!res.body.empty() && !res.has_header("Content-Length"))
      res.set_header("Content-Length", std::to_string(res.body.size()));
  });
}

void OpenAiServer::route() {
  http_->Get("/health", [](const httplib::Request&, httplib::Response& res) { res.status = 200; });
  http_->Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    const ServerGauges gauges{body_budget_->num_reserved(), answer_budget_->num_reserved()};
    res.set_content(prometheus_text(service_->metrics(), options_.served_model_name, gauges),
                    "text/plain; version=0.0.4");
  });
  http_->Get("/v1/models", [this](const httplib::Request&, httplib::Response& res) {
    send_json(res, 200,
              models_json(options_.served_model_name, created_, service_->max_model_len()));
  });
  // Handlers that read their body themselves (read_body), so that it is counted as it arrives.
  using Reader = httplib::ContentReader;
  http_->Post("/v1/completions",
              [this](const httplib::Request& req, httplib::Response& res, const Reader& reader) {
                guarded(res, [&] { completions(read_body(req, reader), res, false); });
              });
  http_->Post("/v1/chat/completions",
              [this](const httplib::Request& req, httplib::Response& res, const Reader& reader) {
                guarded(res, [&] { completions(read_body(req, reader), res, true); });
              });
  http_->Post("/tokenize",
              [this](const httplib::Request& req, httplib::Response& res, const Reader& reader) {
                guarded(res, [&] { tokenize(read_body(req, reader).text, res); });
              });
  http_->Post("/detokenize",
              [this](const httplib::Request& req, httplib::Response& res, const Reader& reader) {
                guarded(res, [&] { detokenize(read_body(req, reader).text, res); });
              });
}

namespace {

// Returns the token ids of a prompt, checked against the vocabulary and the context.
std::vector<int32_t> prompt_tokens(const CompletionPrompt& prompt, const PromptBuilder& builder,
                                   const EngineService& service) {
  std::vector<int32_t> ids;
  if (prompt.is_tokens) {
    const int vocab_size = service.session().model->config.vocab_size;
    for (const int32_t id : prompt.token_ids) {
      if (id >= vocab_size)
        throw bad_request("prompt", str_cat("token id ", id, " is outside the vocabulary (",
                                            vocab_size, " tokens)"));
    }
    ids = prompt.token_ids;
  } else {
    try {
      ids = builder.encode(prompt.text);
    } catch (const Error& e) {
      throw bad_request("prompt", e.what());
    }
  }
  return ids;
}

void check_fits(const std::vector<int32_t>& ids, const EngineService& service, const char* param) {
  if (static_cast<int>(ids.size()) >= service.max_model_len())
    throw bad_request(param,
                      str_cat("the prompt is ", ids.size(), " tokens; this model's context is ",
                              service.max_model_len(), " tokens"));
}

}  // namespace

OpenAiServer::RequestPrompts OpenAiServer::prompt_ids(const CompletionRequest& r,
                                                      bool is_chat) const {
  RequestPrompts prompts;
  if (is_chat) {
    DatasetRow row;
    row.messages = r.messages;
    BuiltPrompt built;
    try {
      built = chat_prompts_.build(row, prompt_request_options(r, options_.reasoning));
    } catch (const Error& e) {
      throw bad_request("messages", e.what());
    }
    if (!built.refusal.empty()) throw bad_request("messages", built.refusal);
    prompts.token_ids.push_back(std::move(built.token_ids));
    prompts.reasoning = built.reasoning;
  } else {
    for (const auto& p : r.prompts)
      prompts.token_ids.push_back(prompt_tokens(p, plain_prompts_, *service_));
  }
  for (const auto& ids : prompts.token_ids)
    check_fits(ids, *service_, is_chat ? "messages" : "prompt");
  return prompts;
}

// A completion in named steps: parse the body (its share of the bodies' budget goes back once it
// is parsed), build the prompts, reserve the answer's share of the answers' budget, submit (the
// service compiles the grammar), and answer whole or as a stream.
void OpenAiServer::completions(RequestBody body, httplib::Response& res, bool is_chat) {
  CompletionRequest r = parse_completion(std::move(body), is_chat);
  RequestPrompts prompts = prompt_ids(r, is_chat);
  r.sampling.reasoning = prompts.reasoning;  // the answer's budget counts a reasoning too
  const size_t num_prompts = prompts.token_ids.size();
  auto reservation = reserve_answer(r, prompts.token_ids);
  std::unique_ptr<RequestGroup> group = submit(r, std::move(prompts));
  ResponseHeader header{r.kind, random_id(is_chat ? "chatcmpl-" : "cmpl-"),
                        static_cast<int64_t>(std::time(nullptr)), options_.served_model_name};
  const size_t num_choices = num_prompts * static_cast<size_t>(r.sampling.n);
  const bool wants_logprobs = r.sampling.logprobs >= 0;
  TokenBytesFn bytes_of = [service = service_](int32_t id) {
    return service->session().tokenizer->token_to_bytes(id, /*at_sequence_start=*/false);
  };
  if (r.stream) {
    send_stream(res, std::move(group), std::move(header),
                {num_choices, num_prompts, r.include_usage, wants_logprobs, std::move(bytes_of)},
                std::move(reservation));
    return;
  }
  answer_whole(std::move(group),
               WholeResponse(std::move(header), num_choices, num_prompts, wants_logprobs,
                             std::move(bytes_of)),
               std::move(reservation), res);
}

CompletionRequest OpenAiServer::parse_completion(RequestBody body, bool is_chat) const {
  const CompletionKind kind = is_chat ? CompletionKind::Chat : CompletionKind::Text;
  CompletionRequest r = parse_completion_request(parse_request_body(body.text), kind,
                                                 options_.defaults, options_.json_grammar);
  if (r.model != options_.served_model_name) throw model_not_found(r.model);
  return r;
}

std::shared_ptr<InFlightBudget::Reservation> OpenAiServer::reserve_answer(
    const CompletionRequest& r, const std::vector<std::vector<int32_t>>& prompts) const {
  std::vector<size_t> prompt_lengths;
  for (const auto& ids : prompts) prompt_lengths.push_back(ids.size());
  const int max_model_len = service_->max_model_len();
  check_response_entries(r, prompt_lengths, max_model_len, options_.max_response_entries);
  const uint64_t num_entries = count_response_entries(r.sampling, prompt_lengths, max_model_len);
  auto reservation = std::make_shared<InFlightBudget::Reservation>(
      InFlightBudget::reserve(answer_budget_, num_entries));
  if (HttpExchange* exchange = HttpExchange::current())
    exchange->wants_memory_trim |= num_entries >= kTrimAfterEntries;
  return reservation;
}

std::unique_ptr<RequestGroup> OpenAiServer::submit(const CompletionRequest& r,
                                                   RequestPrompts prompts) const {
  SamplingParams sampling = r.sampling;
  if (!r.has_seed && !options_.has_default_seed) sampling.seed = random_seed();
  if (r.grammar) sampling.grammar = std::make_shared<const GrammarSource>(*r.grammar);
  std::vector<ServiceRequest> requests;
  for (auto& ids : prompts.token_ids) requests.push_back({std::move(ids), sampling, 0, r.stream});
  try {
    return std::make_unique<RequestGroup>(*service_, std::move(requests));
  } catch (const QueueFull&) {
    throw;
  } catch (const InvalidGrammar& e) {
    throw bad_request(r.grammar_param, e.what());  // compiled by the service, on this thread
  } catch (const Error& e) {
    throw bad_request("", e.what());
  }
}

void OpenAiServer::answer_whole(std::unique_ptr<RequestGroup> group, WholeResponse answer,
                                std::shared_ptr<void> reservation, httplib::Response& res) const {
  // A client that goes away aborts its request, as a stream's does when a write fails.
  const auto connection = ClientConnection::of_current_request();
  while (!group->is_done()) {
    if (connection && connection->is_closed()) {
      group.reset();     // aborts every unfinished sample and frees its blocks
      res.status = 499;  // nobody reads it: nginx's "client closed request"
      return;
    }
    for (const auto& e : group->wait(200ms)) answer.add(e);
  }
  if (!answer.error().empty()) throw bad_request("", answer.error());
  if (answer.is_aborted()) throw overloaded("the server is shutting down");
  answer.send(res, std::move(reservation));
}

void OpenAiServer::tokenize(const std::string& text, httplib::Response& res) {
  const Json body = parse_request_body(text);
  for (const auto& [key, value] : body.items()) {
    if (key != "model" && key != "prompt" && key != "messages" && key != "add_special_tokens")
      throw bad_request(key, str_cat("unknown parameter '", key, "'"));
  }
  if (const auto it = body.find("model"); it != body.end() && !it->is_null()) {
    if (!it->is_string()) throw bad_request("model", "'model' must be a string");
    if (*it != options_.served_model_name) throw model_not_found(it->get<std::string>());
  }
  const bool has_prompt = body.contains("prompt");
  if (has_prompt == body.contains("messages"))
    throw bad_request("prompt", "give either 'prompt' or 'messages'");
  std::vector<int32_t> ids;
  if (has_prompt) {
    const Json& prompt = body["prompt"];
    if (!prompt.is_string()) throw bad_request("prompt", "'prompt' must be a string");
    bool add_special_tokens = true;
    if (const auto it = body.find("add_special_tokens"); it != body.end() && !it->is_null()) {
      if (!it->is_boolean())
        throw bad_request("add_special_tokens", "'add_special_tokens' must be a boolean");
      add_special_tokens = it->get<bool>();
    }
    const Tokenizer& tokenizer = *service_->session().tokenizer;
    ids = add_special_tokens
              ? prompt_tokens({.text = prompt.get<std::string>()}, plain_prompts_, *service_)
              : tokenizer.encode(prompt.get<std::string>(), EncodeOptions{.add_bos = false});
  } else {
    DatasetRow row;
    row.messages = parse_messages(body["messages"]);
    try {
      const BuiltPrompt built = chat_prompts_.build(row);
      if (!built.refusal.empty()) throw bad_request("messages", built.refusal);
      ids = built.token_ids;
    } catch (const DatasetRowError& e) {
      throw bad_request("messages", e.what());
    }
  }
  send_json(res, 200,
            {{"tokens", ids}, {"count", ids.size()}, {"max_model_len", service_->max_model_len()}});
}

void OpenAiServer::detokenize(const std::string& text, httplib::Response& res) {
  const Json body = parse_request_body(text);
  for (const auto& [key, value] : body.items()) {
    if (key != "model" && key != "tokens")
      throw bad_request(key, str_cat("unknown parameter '", key, "'"));
  }
  if (const auto it = body.find("model"); it != body.end() && !it->is_null()) {
    if (!it->is_string()) throw bad_request("model", "'model' must be a string");
    if (*it != options_.served_model_name) throw model_not_found(it->get<std::string>());
  }
  const auto tokens = body.find("tokens");
  if (tokens == body.end() || !tokens->is_array())
    throw bad_request("tokens", "'tokens' must be an array of token ids");
  const int vocab_size = service_->session().model->config.vocab_size;
  std::vector<int32_t> ids;
  for (const auto& id : *tokens) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() >= vocab_size)
      throw bad_request("tokens", str_cat("token id ", id.dump(),
                                          " is not in the vocabulary (0 to ", vocab_size - 1, ")"));
    ids.push_back(static_cast<int32_t>(id.get<int64_t>()));
  }
  send_json(res, 200, {{"prompt", service_->session().tokenizer->decode(ids)}});
}

}  // namespace sluice
