#include "engine/jobs/row_codec.h"

#include <limits>

#include "engine/core/error.h"
#include "engine/core/json_parse.h"
#include "engine/jobs/sqlite_db.h"

namespace sluice {
namespace {

using Json = nlohmann::ordered_json;

// Column positions in kRowColumns.
enum Column : int {
  kRowIndex,
  kLine,
  kStatus,
  kError,
  kInput,
  kMessages,
  kPrompt,
  kPromptTokens,
  kSamples,
  kSeed,
  kQueueMs,
  kTtftMs,
  kTotalMs,
};

// Names the place in errors: "<file>: row 12, column samples".
struct Where {
  const std::string& path;
  int64_t row_index;
  const char* column;
};

[[noreturn]] void fail_at(const Where& where, const std::string& why) {
  fail(where.path, ": row ", where.row_index, ", column ", where.column, ": ", why);
}

Json parse_json_column(const SqliteStatement& statement, int column, const Where& where) {
  if (statement.column_is_null(column)) fail_at(where, "is NULL");
  const std::string text = statement.column_text(column);
  Json value;
  if (const auto failure = try_parse_json(text, value)) {
    fail_at(where, "is " + describe_json_failure(text, *failure));
  }
  return value;
}

int64_t read_int(const SqliteStatement& statement, int column, const Where& where) {
  if (!statement.column_is_integer(column)) fail_at(where, "is not an integer");
  return statement.column_int(column);
}

double read_number(const SqliteStatement& statement, int column, const Where& where) {
  // SQLite stores a bound NaN as NULL; give it back as NaN.
  if (statement.column_is_null(column)) return std::numeric_limits<double>::quiet_NaN();
  if (!statement.column_is_real(column) && !statement.column_is_integer(column))
    fail_at(where, "is not a number");
  return statement.column_double(column);
}

std::string read_text(const SqliteStatement& statement, int column, const Where& where) {
  if (statement.column_is_null(column)) fail_at(where, "is NULL");
  return statement.column_text(column);
}

Conversation messages_from_json(const Json& json, const Where& where) {
  if (!json.is_array()) fail_at(where, "is not a JSON array");
  Conversation messages;
  for (size_t i = 0; i < json.size(); ++i) {
    const Json& message = json[i];
    if (!message.is_object() || !message.contains("role") || !message["role"].is_string() ||
        !message.contains("content") || !message["content"].is_string()) {
      fail_at(where, str_cat("message ", i, " is not {\"role\": string, \"content\": string}"));
    }
    ChatMessage m{message["role"].get<std::string>(), message["content"].get<std::string>(), ""};
    if (message.contains("reasoning")) {
      if (!message["reasoning"].is_string())
        fail_at(where, str_cat("message ", i, " has a reasoning that is not a string"));
      m.reasoning = message["reasoning"].get<std::string>();
    }
    messages.push_back(std::move(m));
  }
  return messages;
}

SampleResult sample_from_json(const Json& json, size_t sample_idx, const Where& where) {
  const auto bad = [&](const char* key, const char* type) {
    fail_at(where, str_cat("sample ", sample_idx, " has no ", type, " '", key, "'"));
  };
  if (!json.is_object()) fail_at(where, str_cat("sample ", sample_idx, " is not an object"));
  SampleResult sample;
  if (!json.contains("output") || !json["output"].is_string()) bad("output", "string");
  sample.output = json["output"].get<std::string>();
  if (!json.contains("output_tokens") || !json["output_tokens"].is_number_integer())
    bad("output_tokens", "integer");
  sample.output_tokens = json["output_tokens"].get<int>();
  if (!json.contains("finish_reason") || !json["finish_reason"].is_string())
    bad("finish_reason", "string");
  sample.finish_reason = json["finish_reason"].get<std::string>();
  // A thinking model's reasoning: present only when there was some (older jobs have none).
  if (json.contains("reasoning")) {
    if (!json["reasoning"].is_string()) bad("reasoning", "string");
    sample.reasoning = json["reasoning"].get<std::string>();
  }
  if (json.contains("reasoning_tokens")) {
    if (!json["reasoning_tokens"].is_number_integer()) bad("reasoning_tokens", "integer");
    sample.reasoning_tokens = json["reasoning_tokens"].get<int>();
  }
  if (json.contains("valid")) {
    if (!json["valid"].is_boolean()) bad("valid", "boolean");
    sample.valid = json["valid"].get<bool>();
  }
  if (json.contains("invalid_reason")) {
    if (!json["invalid_reason"].is_string()) bad("invalid_reason", "string");
    sample.invalid_reason = json["invalid_reason"].get<std::string>();
  }
  if (!json.contains("output_token_ids") || !json["output_token_ids"].is_array())
    bad("output_token_ids", "array");
  for (const Json& id : json["output_token_ids"]) {
    if (!id.is_number_integer()) bad("output_token_ids", "integer-array");
    sample.output_token_ids.push_back(id.get<int32_t>());
  }
  if (!json.contains("extra") || !json["extra"].is_object()) bad("extra", "object");
  sample.extra = json["extra"];
  return sample;
}

std::vector<SampleResult> samples_from_json(const Json& json, const Where& where) {
  if (!json.is_array()) fail_at(where, "is not a JSON array");
  std::vector<SampleResult> samples;
  samples.reserve(json.size());
  for (size_t i = 0; i < json.size(); ++i) samples.push_back(sample_from_json(json[i], i, where));
  return samples;
}

}  // namespace

Json messages_to_json(const Conversation& messages) {
  Json json = Json::array();
  for (const ChatMessage& message : messages) {
    json.push_back(Json{{"role", message.role}, {"content", message.content}});
    if (!message.reasoning.empty()) json.back()["reasoning"] = message.reasoning;
  }
  return json;
}

Json sample_to_json(const SampleResult& sample) {
  Json json = Json::object();
  json["output"] = sample.output;
  json["output_tokens"] = sample.output_tokens;
  json["finish_reason"] = sample.finish_reason;
  if (!sample.reasoning.empty()) json["reasoning"] = sample.reasoning;
  if (sample.reasoning_tokens != 0) json["reasoning_tokens"] = sample.reasoning_tokens;
  if (sample.valid) json["valid"] = *sample.valid;
  if (!sample.invalid_reason.empty()) json["invalid_reason"] = sample.invalid_reason;
  json["output_token_ids"] = sample.output_token_ids;
  json["extra"] = sample.extra;
  return json;
}

std::string to_json_text(const Json& value) {
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

void bind_row_result(SqliteStatement& statement, const RowResult& result) {
  Json samples = Json::array();
  for (const SampleResult& sample : result.samples) samples.push_back(sample_to_json(sample));
  statement.bind_int(1 + kRowIndex, result.row_index);
  statement.bind_int(1 + kLine, static_cast<int64_t>(result.line));
  statement.bind_text(1 + kStatus, to_string(result.status));
  statement.bind_text(1 + kError, result.error);
  statement.bind_text(1 + kInput, to_json_text(result.input));
  statement.bind_text(1 + kMessages, to_json_text(messages_to_json(result.messages)));
  statement.bind_text(1 + kPrompt, result.prompt);
  statement.bind_int(1 + kPromptTokens, result.prompt_tokens);
  statement.bind_text(1 + kSamples, to_json_text(samples));
  // SQLite integers are signed 64-bit: the seed's bits are stored as is and cast back on read.
  statement.bind_int(1 + kSeed, static_cast<int64_t>(result.seed));
  statement.bind_double(1 + kQueueMs, result.queue_ms);
  statement.bind_double(1 + kTtftMs, result.ttft_ms);
  statement.bind_double(1 + kTotalMs, result.total_ms);
}

RowResult read_row_result(const SqliteStatement& statement, const std::string& path) {
  RowResult result;
  result.row_index = read_int(statement, kRowIndex, {path, -1, "row_index"});
  const int64_t row = result.row_index;
  const int64_t line = read_int(statement, kLine, {path, row, "line"});
  if (line < 0) fail_at({path, row, "line"}, "is negative");
  result.line = static_cast<size_t>(line);
  const std::string status = read_text(statement, kStatus, {path, row, "status"});
  try {
    result.status = parse_row_status(status);
  } catch (const Error& e) {
    fail_at({path, row, "status"}, e.what());
  }
  result.error = read_text(statement, kError, {path, row, "error"});
  result.input = parse_json_column(statement, kInput, {path, row, "input"});
  const Where messages_at{path, row, "messages"};
  result.messages =
      messages_from_json(parse_json_column(statement, kMessages, messages_at), messages_at);
  result.prompt = read_text(statement, kPrompt, {path, row, "prompt"});
  result.prompt_tokens =
      static_cast<int>(read_int(statement, kPromptTokens, {path, row, "prompt_tokens"}));
  const Where samples_at{path, row, "samples"};
  result.samples =
      samples_from_json(parse_json_column(statement, kSamples, samples_at), samples_at);
  result.seed = static_cast<uint64_t>(read_int(statement, kSeed, {path, row, "seed"}));
  result.queue_ms = read_number(statement, kQueueMs, {path, row, "queue_ms"});
  result.ttft_ms = read_number(statement, kTtftMs, {path, row, "ttft_ms"});
  result.total_ms = read_number(statement, kTotalMs, {path, row, "total_ms"});
  return result;
}

}  // namespace sluice
