// Where a remote job's requests go: OpenAI-compatible servers (vLLM, SGLang, llama.cpp's server,
// `sluice serve`) and how hard to push them. Kept in the job file with the other parameters, so a
// resumed job goes back to the same servers unless told otherwise; the API key itself is never
// stored, only the name of the environment variable that holds it.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/reasoning/reasoning_prompt.h"

namespace sluice {

struct RemoteSpec {
  std::vector<std::string> endpoints;  // base URLs, e.g. http://gpu1:8000/v1
  std::string model;                   // the model name to ask for; "" = the servers' only model
  std::string api_key_env;             // the environment variable holding the key; "" = none
  int concurrency = 16;                // requests in flight at once, over all endpoints
  double requests_per_minute = 0.0;    // 0 = no limit
  double tokens_per_minute = 0.0;      // prompt and output tokens; 0 = no limit
  double request_timeout_s = 600.0;    // one attempt, connection to last byte
  int retries = 5;                     // further attempts of a failing request
  // The most bytes of one answer the driver reads (a server that sends more is cut off there, as
  // a failed attempt): a safety limit, not a setting, so not stored in the job.
  int64_t max_answer_bytes = int64_t{64} << 20;
  // The job's reasoning controls (PromptOptions::reasoning, stored with the prompt options, not
  // here): a chat request forwards the effort and the thinking switch (remote_request_body).
  ReasoningControls reasoning;

  bool is_remote() const { return !endpoints.empty(); }
};

nlohmann::ordered_json remote_spec_to_json(const RemoteSpec& spec);
// Throws Error naming a missing or bad key.
RemoteSpec remote_spec_from_json(const nlohmann::ordered_json& json);

// Checks the values a user gave (URLs with http:// or https://, counts in range); throws Error
// naming the option at fault.
void check_remote_spec(const RemoteSpec& spec);

}  // namespace sluice
