#include "app/server/openai_server.h"

#include <httplib.h>
#include <sys/socket.h>

#include <atomic>
#include <ctime>
#include <random>

#include "app/server/api_error.h"
#include "app/server/client_connection.h"
#include "app/server/completion_request.h"
#include "app/server/completion_response.h"
#include "app/server/prometheus_metrics.h"
#include "app/server/request_group.h"
#include "engine/core/error.h"
#include "engine/data/dataset_reader.h"

namespace sluice {

namespace {

using Json = nlohmann::json;
using namespace std::chrono_literals;

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

PromptBuilder make_builder(const EngineService& service, bool use_chat_template) {
  const ModelSession& session = service.session();
  PromptBuilder builder(PromptOptions{.use_chat_template = use_chat_template},
                        session.model->chat_template, *session.tokenizer, DatasetFormat::OpenAiChat,
                        {}, session.model->chat_template_origin);
  builder.set_max_model_len(service.max_model_len());
  return builder;
}

// The state of one streamed response, kept alive by the content provider.
struct StreamState {
  std::unique_ptr<RequestGroup> group;
  ResponseHeader header;
  bool include_usage = false;
  std::vector<bool> has_sent;  // [choices]: the first chunk (with a chat's role) went out
  Usage usage;
  std::vector<bool> is_prompt_counted;  // [prompts]
  // Log-probabilities asked for: each choice's tokens not yet sent (a token that ends inside a
  // UTF-8 character has no text of its own and goes with the next chunk), and its bytes so far.
  bool wants_logprobs = false;
  TokenBytesFn bytes_of;
  std::vector<std::vector<int32_t>> pending_ids;             // [choices]
  std::vector<std::vector<TokenLogprobs>> pending_logprobs;  // [choices]
  std::vector<size_t> num_bytes_sent;                        // [choices]

  // Returns the logprobs of choice's pending tokens for its next chunk (null when not asked or
  // none are pending).
  nlohmann::json take_logprobs(size_t choice) {
    if (!wants_logprobs || pending_ids[choice].empty()) return nullptr;
    nlohmann::json out = logprobs_json(header.kind, pending_ids[choice], pending_logprobs[choice],
                                       bytes_of, num_bytes_sent[choice]);
    for (const int32_t id : pending_ids[choice]) num_bytes_sent[choice] += bytes_of(id).size();
    pending_ids[choice].clear();
    pending_logprobs[choice].clear();
    return out;
  }
};

}  // namespace

OpenAiServer::OpenAiServer(std::shared_ptr<EngineService> service, ServerOptions options)
    : service_(std::move(service)),
      options_(std::move(options)),
      created_(static_cast<int64_t>(std::time(nullptr))),
      chat_prompts_(make_builder(*service_, true)),
      plain_prompts_(make_builder(*service_, false)),
      http_(std::make_unique<httplib::Server>()) {
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

void OpenAiServer::check_key(const httplib::Request& req) const {
  if (options_.api_key.empty()) return;
  if (req.get_header_value("Authorization") != "Bearer " + options_.api_key) throw unauthorized();
}

void OpenAiServer::route() {
  // Errors httplib answers itself (no route, body too large) get the OpenAI body too.
  const httplib::Server::HandlerWithResponse on_error = [this](const httplib::Request& req,
                                                               httplib::Response& res) {
    if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
    if (res.status == 413) {
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
  http_->Get("/health", [](const httplib::Request&, httplib::Response& res) { res.status = 200; });
  http_->Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(prometheus_text(service_->metrics(), options_.served_model_name),
                    "text/plain; version=0.0.4");
  });
  http_->Get("/v1/models", [this](const httplib::Request& req, httplib::Response& res) {
    guarded(res, [&] {
      check_key(req);
      send_json(res, 200,
                models_json(options_.served_model_name, created_, service_->max_model_len()));
    });
  });
  http_->Post("/v1/completions", [this](const httplib::Request& req, httplib::Response& res) {
    guarded(res, [&] { completions(req, res, false); });
  });
  http_->Post("/v1/chat/completions", [this](const httplib::Request& req, httplib::Response& res) {
    guarded(res, [&] { completions(req, res, true); });
  });
  http_->Post("/tokenize", [this](const httplib::Request& req, httplib::Response& res) {
    guarded(res, [&] { tokenize(req, res); });
  });
  http_->Post("/detokenize", [this](const httplib::Request& req, httplib::Response& res) {
    guarded(res, [&] { detokenize(req, res); });
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

void OpenAiServer::completions(const httplib::Request& req, httplib::Response& res, bool is_chat) {
  check_key(req);
  const CompletionKind kind = is_chat ? CompletionKind::Chat : CompletionKind::Text;
  const CompletionRequest r =
      parse_completion_request(parse_request_body(req.body), kind, options_.defaults);
  if (r.model != options_.served_model_name) throw model_not_found(r.model);
  std::vector<std::vector<int32_t>> prompts;
  if (is_chat) {
    DatasetRow row;
    row.messages = r.messages;
    BuiltPrompt built;
    try {
      built = chat_prompts_.build(row);
    } catch (const Error& e) {
      throw bad_request("messages", e.what());
    }
    if (!built.refusal.empty()) throw bad_request("messages", built.refusal);
    prompts.push_back(std::move(built.token_ids));
  } else {
    for (const auto& p : r.prompts) prompts.push_back(prompt_tokens(p, plain_prompts_, *service_));
  }
  SamplingParams sampling = r.sampling;
  if (!r.has_seed && !options_.has_default_seed) sampling.seed = random_seed();
  if (r.grammar) {
    try {
      sampling.grammar = grammars_.get(*r.grammar);
    } catch (const Error& e) {
      throw bad_request(r.grammar_param, e.what());
    }
  }
  std::vector<ServiceRequest> requests;
  for (auto& ids : prompts) {
    check_fits(ids, *service_, is_chat ? "messages" : "prompt");
    requests.push_back({std::move(ids), sampling, 0, r.stream});
  }
  std::unique_ptr<RequestGroup> group;
  try {
    group = std::make_unique<RequestGroup>(*service_, std::move(requests));
  } catch (const QueueFull&) {
    throw;
  } catch (const Error& e) {
    throw bad_request("", e.what());
  }
  ResponseHeader header{kind, random_id(is_chat ? "chatcmpl-" : "cmpl-"),
                        static_cast<int64_t>(std::time(nullptr)), options_.served_model_name};
  const size_t num_choices = prompts.size() * static_cast<size_t>(r.sampling.n);

  const bool wants_logprobs = r.sampling.logprobs >= 0;
  TokenBytesFn bytes_of = [service = service_](int32_t id) {
    return service->session().tokenizer->token_to_bytes(id, /*at_sequence_start=*/false);
  };
  if (!r.stream) {
    std::vector<Choice> choices(num_choices);
    Usage usage;
    std::vector<bool> is_prompt_counted(prompts.size(), false);
    std::string error;
    bool is_aborted = false;
    // A client that goes away aborts its request, as a stream's does when a write fails.
    const auto connection =
        ClientConnection::find(req.local_addr, req.local_port, req.remote_addr, req.remote_port);
    while (!group->is_done()) {
      if (connection && connection->is_closed()) {
        group.reset();     // aborts every unfinished sample and frees its blocks
        res.status = 499;  // nobody reads it: nginx's "client closed request"
        return;
      }
      for (auto& e : group->wait(200ms)) {
        if (!e.event.is_finished) continue;
        const FinishedRequest& f = e.event.finished;
        Choice& choice = choices[static_cast<size_t>(e.choice_index)];
        choice = {e.choice_index, f.output_text, f.finish_reason, nullptr};
        if (wants_logprobs) {
          choice.logprobs = logprobs_json(kind, f.output_token_ids, f.output_logprobs, bytes_of);
        }
        usage.completion_tokens += static_cast<int64_t>(f.output_token_ids.size());
        if (!is_prompt_counted[e.prompt_idx]) {
          is_prompt_counted[e.prompt_idx] = true;
          usage.prompt_tokens += f.num_prompt_tokens;
        }
        if (f.finish_reason == FinishReason::Error && error.empty()) error = f.error;
        is_aborted |= f.finish_reason == FinishReason::Abort;
      }
    }
    if (!error.empty()) throw bad_request("", error);
    if (is_aborted) throw overloaded("the server is shutting down");
    send_json(res, 200, completion_json(header, choices, usage));
    return;
  }

  auto state = std::make_shared<StreamState>();
  state->group = std::move(group);
  state->header = std::move(header);
  state->include_usage = r.include_usage;
  state->has_sent.assign(num_choices, false);
  state->is_prompt_counted.assign(prompts.size(), false);
  state->wants_logprobs = wants_logprobs;
  state->bytes_of = std::move(bytes_of);
  state->pending_ids.resize(num_choices);
  state->pending_logprobs.resize(num_choices);
  state->num_bytes_sent.assign(num_choices, 0);
  res.set_header("Cache-Control", "no-cache");
  res.set_chunked_content_provider("text/event-stream", [state](size_t, httplib::DataSink& sink) {
    // A write that fails means the client went away: returning false ends the response, and
    // dropping the state aborts the requests and frees their blocks.
    std::string out;
    for (auto& e : state->group->wait(200ms)) {
      const size_t choice = static_cast<size_t>(e.choice_index);
      const bool is_first = !state->has_sent[choice];
      if (!e.event.is_finished) {
        const TokenDelta& token = e.event.token;
        if (state->wants_logprobs && token.logprobs && token.token_id >= 0) {
          state->pending_ids[choice].push_back(token.token_id);
          state->pending_logprobs[choice].push_back(*token.logprobs);
        }
        if (token.text.empty()) continue;
        state->has_sent[choice] = true;
        out += sse_event(chunk_json(state->header, e.choice_index, token.text, is_first,
                                    FinishReason::None, state->include_usage,
                                    state->take_logprobs(choice)));
        continue;
      }
      const FinishedRequest& f = e.event.finished;
      state->usage.completion_tokens += static_cast<int64_t>(f.output_token_ids.size());
      if (!state->is_prompt_counted[e.prompt_idx]) {
        state->is_prompt_counted[e.prompt_idx] = true;
        state->usage.prompt_tokens += f.num_prompt_tokens;
      }
      if (f.finish_reason == FinishReason::Error)
        out += sse_event(error_json(bad_request("", f.error)));
      state->has_sent[choice] = true;
      out += sse_event(chunk_json(state->header, e.choice_index, "", is_first, f.finish_reason,
                                  state->include_usage, state->take_logprobs(choice)));
    }
    if (!out.empty() && !sink.write(out.data(), out.size())) return false;
    if (!state->group->is_done()) return true;
    std::string tail;
    if (state->include_usage) tail += sse_event(usage_chunk_json(state->header, state->usage));
    tail += kSseDone;
    if (!sink.write(tail.data(), tail.size())) return false;
    sink.done();
    return true;
  });
}

void OpenAiServer::tokenize(const httplib::Request& req, httplib::Response& res) {
  check_key(req);
  const Json body = parse_request_body(req.body);
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

void OpenAiServer::detokenize(const httplib::Request& req, httplib::Response& res) {
  check_key(req);
  const Json body = parse_request_body(req.body);
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
