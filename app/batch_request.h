// One line of an OpenAI Batch input file ({"custom_id", "method": "POST", "url", "body"}) checked
// into the completion request it asks for. The body goes through the server's own parsing, so a
// body `sluice serve` would refuse is refused here with the same words, and per-line sampling
// parameters (max_tokens, temperature, seed, n, stop, response_format, ...) mean what they mean
// there. Custom ids must be unique within the file, as the Batch API requires.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "app/server/completion_request.h"
#include "engine/input/dataset_row.h"
#include "engine/sched/sampling_params.h"

namespace sluice {

struct BatchRequest {
  std::string custom_id;
  CompletionRequest request;  // kind from the line's url
};

// Returns the completion kind of a batch url ("/v1/chat/completions" -> Chat, "/v1/completions"
// -> Text), or nullopt for any other url.
std::optional<CompletionKind> batch_url_kind(std::string_view url);

// Returns the completion kind of a stored batch line (its "url"), or nullopt when it has none
// that is supported.
std::optional<CompletionKind> batch_line_kind(const nlohmann::ordered_json& fields);

class BatchRequests {
 public:
  // input_path names the file in errors.
  explicit BatchRequests(std::string input_path) : input_path_(std::move(input_path)) {}

  // Checks row (a batch line) and returns its request; defaults and json_defaults (a JSON
  // grammar's options) give what the body leaves out. Throws Error starting "path:line: " for a
  // missing or non-string custom_id, a custom_id an earlier line has (naming both lines), a method
  // other than POST, a url other than the two completion endpoints (named), or a body the server
  // refuses (its 400 message); a text completion body must hold one prompt (one line, one
  // response).
  BatchRequest parse(const DatasetRow& row, const SamplingParams& defaults,
                     const JsonGrammarOptions& json_defaults = {});

  // Remembers row's custom_id, if it has one, without checking the rest: a row that a resumed
  // job has already finished still claims its id.
  void remember(const DatasetRow& row);

 private:
  // Records custom_id as row's; throws Error when an earlier line has it.
  void claim(const std::string& custom_id, size_t line);

  std::string input_path_;
  std::unordered_map<std::string, size_t> line_of_custom_id_;
};

}  // namespace sluice
