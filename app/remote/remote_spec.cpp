#include "app/remote/remote_spec.h"

#include "engine/core/error.h"

namespace sluice {

namespace {

using Json = nlohmann::ordered_json;

template <typename T>
T get(const Json& j, const char* key) {
  if (!j.contains(key)) fail("job parameters: remote: missing ", key);
  try {
    return j.at(key).get<T>();
  } catch (const nlohmann::json::exception&) {
    fail("job parameters: remote: ", key, " has the wrong type");
  }
}

}  // namespace

Json remote_spec_to_json(const RemoteSpec& s) {
  return Json{{"endpoints", s.endpoints},
              {"model", s.model},
              {"api_key_env", s.api_key_env},
              {"concurrency", s.concurrency},
              {"requests_per_minute", s.requests_per_minute},
              {"tokens_per_minute", s.tokens_per_minute},
              {"request_timeout_s", s.request_timeout_s},
              {"retries", s.retries}};
}

RemoteSpec remote_spec_from_json(const Json& j) {
  if (!j.is_object()) fail("job parameters: remote is not an object");
  RemoteSpec s;
  s.endpoints = get<std::vector<std::string>>(j, "endpoints");
  s.model = get<std::string>(j, "model");
  s.api_key_env = get<std::string>(j, "api_key_env");
  s.concurrency = get<int>(j, "concurrency");
  s.requests_per_minute = get<double>(j, "requests_per_minute");
  s.tokens_per_minute = get<double>(j, "tokens_per_minute");
  s.request_timeout_s = get<double>(j, "request_timeout_s");
  s.retries = get<int>(j, "retries");
  check_remote_spec(s);
  return s;
}

void check_remote_spec(const RemoteSpec& s) {
  for (const std::string& url : s.endpoints) {
    if (!url.starts_with("http://") && !url.starts_with("https://"))
      fail("--endpoint '", url, "' must start with http:// or https://");
    if (url.find_first_of(" \t\r\n") != std::string::npos)
      fail("--endpoint '", url, "' has white space in it");
  }
  if (s.concurrency < 1 || s.concurrency > 4096)
    fail("--concurrency must be 1 to 4096, not ", s.concurrency);
  if (s.requests_per_minute < 0) fail("--requests-per-minute must not be negative");
  if (s.tokens_per_minute < 0) fail("--tokens-per-minute must not be negative");
  if (!(s.request_timeout_s > 0) || s.request_timeout_s > 86400)
    fail("--request-timeout must be above 0 and at most 86400 seconds");
  if (s.retries < 0 || s.retries > 100) fail("--retries must be 0 to 100, not ", s.retries);
}

}  // namespace sluice
