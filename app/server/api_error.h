// Errors of the OpenAI-compatible API: an HTTP status and the body OpenAI's clients expect,
// {"error": {"message", "type", "param", "code"}}. The protocol functions throw ApiError; the
// HTTP wiring turns it into the response, and the server goes on serving.
#pragma once

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

namespace sluice {

class ApiError : public std::runtime_error {
 public:
  ApiError(int status, std::string type, std::string code, std::string param,
           const std::string& message)
      : std::runtime_error(message),
        status_(status),
        type_(std::move(type)),
        code_(std::move(code)),
        param_(std::move(param)) {}

  int status() const { return status_; }
  const std::string& type() const { return type_; }
  const std::string& code() const { return code_; }
  const std::string& param() const { return param_; }

 private:
  int status_;
  std::string type_;
  std::string code_;
  std::string param_;
};

// 400 invalid_request_error naming the parameter at fault ("" for the body as a whole).
ApiError bad_request(const std::string& param, const std::string& message);
// 400 for a parameter the engine does not implement (rather than ignoring it silently).
ApiError unsupported_parameter(const std::string& param);
// 401 for a missing or wrong API key.
ApiError unauthorized();
// 404 for a model this server does not serve.
ApiError model_not_found(const std::string& model);
// 404 for a path with no route.
ApiError route_not_found(const std::string& method, const std::string& path);
// 413 for a body past the limit.
ApiError body_too_large(size_t max_body_bytes);
// 431 for a request line and headers past the limit.
ApiError head_too_large(size_t max_head_bytes);
// 503 when the engine's queue is full.
ApiError overloaded(const std::string& message);
// 500 for a failure of the server itself.
ApiError internal_error(const std::string& message);

// Returns {"error": {"message", "type", "param" (null when empty), "code"}}.
nlohmann::json error_json(const ApiError& error);

}  // namespace sluice
