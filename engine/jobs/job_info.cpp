#include "engine/jobs/job_info.h"

#include <ctime>

#include "engine/core/error.h"

namespace sluice {
namespace {

using Json = nlohmann::ordered_json;

const Json& require(const Json& json, const char* key, const std::string& where) {
  const auto it = json.find(key);
  if (it == json.end()) fail(where, ": job info has no '", key, "'");
  return *it;
}

std::string require_string(const Json& json, const char* key, const std::string& where) {
  const Json& value = require(json, key, where);
  if (!value.is_string()) fail(where, ": job info '", key, "' is not a string");
  return value.get<std::string>();
}

int64_t require_int(const Json& json, const char* key, const std::string& where) {
  const Json& value = require(json, key, where);
  if (!value.is_number_integer()) fail(where, ": job info '", key, "' is not an integer");
  return value.get<int64_t>();
}

}  // namespace

Json job_info_to_json(const JobInfo& info) {
  Json json = Json::object();
  json["source_path"] = info.source_path;
  json["source_sha256"] = info.source_sha256;
  json["source_size_bytes"] = info.source_size_bytes;
  json["source_format"] = info.source_format;
  json["model_path"] = info.model_path;
  json["model_identity"] = info.model_identity;
  json["params"] = info.params;
  json["created_at"] = info.created_at;
  json["total_rows"] = info.total_rows;
  if (!info.grammar_notes.empty()) json["grammar_notes"] = info.grammar_notes;
  if (info.has_more_grammar_notes) json["has_more_grammar_notes"] = true;
  return json;
}

JobInfo job_info_from_json(const Json& json, const std::string& where) {
  if (!json.is_object()) fail(where, ": job info is not a JSON object");
  JobInfo info;
  info.source_path = require_string(json, "source_path", where);
  info.source_sha256 = require_string(json, "source_sha256", where);
  info.source_size_bytes = require_int(json, "source_size_bytes", where);
  info.source_format = require_string(json, "source_format", where);
  info.model_path = require_string(json, "model_path", where);
  info.model_identity = require_string(json, "model_identity", where);
  info.params = require(json, "params", where);
  if (!info.params.is_object()) fail(where, ": job info 'params' is not an object");
  info.created_at = require_string(json, "created_at", where);
  info.total_rows = require_int(json, "total_rows", where);
  if (const auto it = json.find("grammar_notes"); it != json.end()) {
    if (!it->is_array()) fail(where, ": job info 'grammar_notes' is not an array");
    for (const Json& note : *it) {
      if (!note.is_string()) fail(where, ": job info 'grammar_notes' holds a non-string");
      info.grammar_notes.push_back(note.get<std::string>());
    }
  }
  if (const auto it = json.find("has_more_grammar_notes"); it != json.end()) {
    if (!it->is_boolean()) fail(where, ": job info 'has_more_grammar_notes' is not a boolean");
    info.has_more_grammar_notes = it->get<bool>();
  }
  return info;
}

std::string utc_timestamp_now() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

}  // namespace sluice
