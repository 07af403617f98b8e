#include "engine/tokenizer/hf_tokenizer_config.h"

#include <nlohmann/json.hpp>

#include <charconv>

#include "engine/core/error.h"
#include "engine/core/json_parse.h"
#include "engine/core/mapped_file.h"

namespace sluice {

namespace {

using Json = nlohmann::json;

Json parse_json_object(const std::string& path) {
  Json json = parse_json_text<Json>(read_text_file(path), path);
  if (!json.is_object()) fail(path, ": expected a JSON object at the top level");
  return json;
}

std::optional<bool> optional_bool(const Json& json, const std::string& key,
                                  const std::string& path) {
  const auto it = json.find(key);
  if (it == json.end() || it->is_null()) return std::nullopt;
  if (!it->is_boolean()) fail(path, ": ", key, " must be true or false");
  return it->get<bool>();
}

// A special token is written as "<s>" or as {"content": "<s>", ...}; null means none.
std::optional<std::string> optional_token(const Json& json, const std::string& key,
                                          const std::string& path) {
  const auto it = json.find(key);
  if (it == json.end()) return std::nullopt;
  if (it->is_null()) return std::string();
  if (it->is_string()) return it->get<std::string>();
  if (it->is_object() && it->contains("content") && (*it)["content"].is_string()) {
    return (*it)["content"].get<std::string>();
  }
  fail(path, ": ", key, " must be a string, null, or an object with a string \"content\"");
}

std::vector<AddedToken> read_added_tokens(const Json& json, const std::string& path) {
  std::vector<AddedToken> tokens;
  const auto it = json.find("added_tokens_decoder");
  if (it == json.end() || it->is_null()) return tokens;
  if (!it->is_object()) fail(path, ": added_tokens_decoder must be an object of id -> token");
  for (const auto& [key, value] : it->items()) {
    int32_t id = -1;
    const auto [end, error] = std::from_chars(key.data(), key.data() + key.size(), id);
    if (error != std::errc() || end != key.data() + key.size() || id < 0) {
      fail(path, ": added_tokens_decoder key '", key, "' is not a token id");
    }
    if (!value.is_object() || !value.contains("content") || !value["content"].is_string()) {
      fail(path, ": added_tokens_decoder[\"", key, "\"] needs a string \"content\"");
    }
    const auto special = value.find("special");
    if (special != value.end() && !special->is_boolean()) {
      fail(path, ": added_tokens_decoder[\"", key, "\"].special must be true or false");
    }
    tokens.push_back(
        {id, value["content"].get<std::string>(), special != value.end() && special->get<bool>()});
  }
  return tokens;
}

}  // namespace

HfTokenizerConfig read_hf_tokenizer_config(const std::string& path) {
  const Json json = parse_json_object(path);
  HfTokenizerConfig config;
  config.add_bos_token = optional_bool(json, "add_bos_token", path);
  config.add_eos_token = optional_bool(json, "add_eos_token", path);
  config.bos_token = optional_token(json, "bos_token", path);
  config.eos_token = optional_token(json, "eos_token", path);
  config.added_tokens = read_added_tokens(json, path);
  return config;
}

std::vector<int32_t> read_hf_generation_eos_ids(const std::string& path) {
  const Json json = parse_json_object(path);
  const auto it = json.find("eos_token_id");
  if (it == json.end() || it->is_null()) return {};
  const Json ids = it->is_array() ? *it : Json::array({*it});
  std::vector<int32_t> out;
  for (const Json& id : ids) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > INT32_MAX) {
      fail(path, ": eos_token_id must be a non-negative integer or a list of them");
    }
    out.push_back(static_cast<int32_t>(id.get<int64_t>()));
  }
  return out;
}

}  // namespace sluice
