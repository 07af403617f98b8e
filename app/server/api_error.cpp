#include "app/server/api_error.h"

#include "engine/core/error.h"

namespace sluice {

ApiError bad_request(const std::string& param, const std::string& message) {
  return ApiError(400, "invalid_request_error",
                  param.empty() ? "invalid_request" : "invalid_parameter", param, message);
}

ApiError unsupported_parameter(const std::string& param) {
  return ApiError(
      400, "invalid_request_error", "unsupported_parameter", param,
      str_cat("'", param, "' is not supported by this server (the engine does not produce it)"));
}

ApiError unauthorized() {
  return ApiError(401, "authentication_error", "invalid_api_key", "",
                  "missing or incorrect API key; send it as 'Authorization: Bearer <key>'");
}

ApiError model_not_found(const std::string& model) {
  return ApiError(404, "invalid_request_error", "model_not_found", "model",
                  str_cat("the model '", model, "' does not exist on this server"));
}

ApiError route_not_found(const std::string& method, const std::string& path) {
  return ApiError(404, "invalid_request_error", "not_found", "",
                  str_cat("no route for ", method, " ", path));
}

ApiError body_too_large(size_t max_body_bytes) {
  return ApiError(413, "invalid_request_error", "request_too_large", "",
                  str_cat("the request body is larger than ", max_body_bytes, " bytes"));
}

ApiError head_too_large(size_t max_head_bytes) {
  return ApiError(
      431, "invalid_request_error", "request_header_too_large", "",
      str_cat("the request line and headers are larger than ", max_head_bytes, " bytes"));
}

ApiError overloaded(const std::string& message) {
  return ApiError(503, "server_error", "overloaded", "", message);
}

ApiError internal_error(const std::string& message) {
  return ApiError(500, "server_error", "internal_error", "", message);
}

nlohmann::json error_json(const ApiError& error) {
  return {
      {"error",
       {{"message", error.what()},
        {"type", error.type()},
        {"param", error.param().empty() ? nlohmann::json(nullptr) : nlohmann::json(error.param())},
        {"code", error.code()}}}};
}

}  // namespace sluice
