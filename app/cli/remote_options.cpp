#include "app/cli/remote_options.h"

#include "app/cli/cli_options.h"
#include "engine/core/error.h"

namespace sluice::cli {

namespace {

const char* const kTuningOptions[] = {
    "remote-model",      "api-key-env",     "concurrency", "requests-per-minute",
    "tokens-per-minute", "request-timeout", "retries"};

void check(const RemoteSpec& spec) {
  try {
    check_remote_spec(spec);
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
}

}  // namespace

void add_remote_options(QCommandLineParser& parser) {
  parser.addOptions({
      {"endpoint",
       "Run the job on an OpenAI-compatible server at URL (its /v1 base, e.g. "
       "http://gpu1:8000/v1) instead of a local model; repeat it to spread the rows over several.",
       "URL"},
      {"remote-model", "The model the servers serve, by name (default: their only one).", "NAME"},
      {"api-key-env", "Environment variable holding the servers' API key (sent as a bearer token).",
       "VAR"},
      {"concurrency", "Remote requests in flight at once, over all endpoints (default 16).", "N"},
      {"requests-per-minute", "Remote requests started per minute at most (default: no limit).",
       "N"},
      {"tokens-per-minute",
       "Remote prompt and output tokens per minute at most (default: no limit).", "N"},
      {"request-timeout", "Seconds one remote request may take (default 600).", "S"},
      {"retries",
       "Further attempts of a remote request that fails (connection, 429, 5xx, timeout; "
       "default 5); then its row is recorded as failed.",
       "N"},
  });
}

bool has_remote_tuning(const QCommandLineParser& parser) {
  for (const char* name : kTuningOptions) {
    if (parser.isSet(name)) return true;
  }
  return false;
}

std::function<void(RemoteSpec&)> remote_overrides(const QCommandLineParser& parser) {
  std::optional<std::vector<std::string>> endpoints;
  if (parser.isSet("endpoint")) {
    endpoints.emplace();
    for (const QString& url : parser.values("endpoint")) endpoints->push_back(url.toStdString());
  }
  std::optional<std::string> model;
  std::optional<std::string> key_env;
  if (parser.isSet("remote-model")) model = parser.value("remote-model").toStdString();
  if (parser.isSet("api-key-env")) key_env = parser.value("api-key-env").toStdString();
  const auto number = [&](const char* name) {
    return parser.isSet(name) ? std::optional<double>(option_double(parser, name, 0))
                              : std::nullopt;
  };
  const auto count = [&](const char* name, long long max_value) {
    return parser.isSet(name)
               ? std::optional<int>(static_cast<int>(option_int(parser, name, 0, 0, max_value)))
               : std::nullopt;
  };
  const auto concurrency = count("concurrency", 4096);
  const auto retries = count("retries", 100);
  const auto rpm = number("requests-per-minute");
  const auto tpm = number("tokens-per-minute");
  const auto timeout = number("request-timeout");
  return [=](RemoteSpec& s) {
    if (endpoints) s.endpoints = *endpoints;
    if (model) s.model = *model;
    if (key_env) s.api_key_env = *key_env;
    if (concurrency) s.concurrency = *concurrency;
    if (retries) s.retries = *retries;
    if (rpm) s.requests_per_minute = *rpm;
    if (tpm) s.tokens_per_minute = *tpm;
    if (timeout) s.request_timeout_s = *timeout;
    check(s);
  };
}

std::optional<RemoteSpec> read_remote_options(const QCommandLineParser& parser) {
  if (!parser.isSet("endpoint")) {
    for (const char* name : kTuningOptions) {
      if (parser.isSet(name)) throw UsageError(str_cat("--", name, " needs --endpoint"));
    }
    return std::nullopt;
  }
  RemoteSpec s;
  remote_overrides(parser)(s);
  return s;
}

}  // namespace sluice::cli
