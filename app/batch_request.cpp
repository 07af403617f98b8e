#include "app/batch_request.h"

#include "engine/core/error.h"

namespace sluice {

namespace {

constexpr std::string_view kChatUrl = "/v1/chat/completions";
constexpr std::string_view kTextUrl = "/v1/completions";

}  // namespace

std::optional<CompletionKind> batch_url_kind(std::string_view url) {
  if (url == kChatUrl) return CompletionKind::Chat;
  if (url == kTextUrl) return CompletionKind::Text;
  return std::nullopt;
}

std::optional<CompletionKind> batch_line_kind(const nlohmann::ordered_json& fields) {
  const auto url = fields.find("url");
  if (url == fields.end() || !url->is_string()) return std::nullopt;
  return batch_url_kind(url->get<std::string>());
}

void BatchRequests::claim(const std::string& custom_id, size_t line) {
  const auto [it, is_new] = line_of_custom_id_.emplace(custom_id, line);
  if (!is_new && it->second != line) {
    fail(input_path_, ":", line, ": custom_id \"", custom_id, "\" is already used on line ",
         it->second, " (each line of a batch file needs its own custom_id)");
  }
}

void BatchRequests::remember(const DatasetRow& row) {
  const auto custom_id = row.fields.find("custom_id");
  if (custom_id != row.fields.end() && custom_id->is_string())
    line_of_custom_id_.emplace(custom_id->get<std::string>(), row.line);
}

BatchRequest BatchRequests::parse(const DatasetRow& row, const SamplingParams& defaults,
                                  const JsonGrammarOptions& json_defaults) {
  const nlohmann::ordered_json& fields = row.fields;
  const std::string where = str_cat(input_path_, ":", row.line, ": ");
  const auto custom_id = fields.find("custom_id");
  if (custom_id == fields.end() || !custom_id->is_string() || custom_id->get<std::string>().empty())
    fail(where, "a batch line needs a non-empty string 'custom_id'");
  BatchRequest out;
  out.custom_id = custom_id->get<std::string>();
  claim(out.custom_id, row.line);
  const auto method = fields.find("method");
  if (method == fields.end() || *method != "POST") {
    fail(where, "batch line '", out.custom_id, "': 'method' must be \"POST\", not ",
         method == fields.end() ? "missing" : method->dump());
  }
  const auto url = fields.find("url");
  if (url == fields.end() || !url->is_string())
    fail(where, "batch line '", out.custom_id, "': 'url' must be a string");
  const auto kind = batch_url_kind(url->get<std::string>());
  if (!kind) {
    fail(where, "batch line '", out.custom_id, "': url \"", url->get<std::string>(),
         "\" is not supported (sluice runs ", kChatUrl, " and ", kTextUrl, ")");
  }
  const auto body = fields.find("body");
  if (body == fields.end() || !body->is_object())
    fail(where, "batch line '", out.custom_id, "': 'body' must be a JSON object");
  try {
    // The server's parser takes nlohmann::json; the text round trip converts the ordered object.
    out.request = parse_completion_request(nlohmann::json::parse(body->dump()), *kind, defaults,
                                           json_defaults);
  } catch (const std::runtime_error& e) {  // ApiError (400), as the server would answer
    fail(where, "batch line '", out.custom_id, "': invalid body: ", e.what());
  }
  if (*kind == CompletionKind::Text && out.request.prompts.size() != 1) {
    fail(where, "batch line '", out.custom_id,
         "': invalid body: 'prompt' must hold one prompt in a batch line (one line, one "
         "response), not ",
         out.request.prompts.size());
  }
  if (out.request.stream)
    fail(where, "batch line '", out.custom_id, "': invalid body: 'stream' is not for batch lines");
  return out;
}

}  // namespace sluice
