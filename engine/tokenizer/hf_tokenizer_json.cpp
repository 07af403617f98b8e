#include "engine/tokenizer/hf_tokenizer_json.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <string_view>
#include <type_traits>

#include "engine/core/error.h"
#include "engine/core/json_parse.h"
#include "engine/core/mapped_file.h"
#include "engine/tokenizer/end_of_turn.h"

namespace sluice {

namespace {

using Json = nlohmann::json;

// The Split patterns of the pre-tokenizers Sluice implements, as tokenizer.json spells them.
constexpr std::string_view kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
constexpr std::string_view kLlama3Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kQwen2Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// Where a JSON object sits in tokenizer.json ("pre_tokenizer.pretokenizers[1]"), so that a value
// of the wrong type is named by its key path.
struct JsonPlace {
  const std::string& path;  // tokenizer.json
  std::string key_path;     // empty for the top level

  JsonPlace at(std::string_view key) const {
    return {path, key_path.empty() ? std::string(key) : str_cat(key_path, ".", key)};
  }
  JsonPlace at(size_t idx) const { return {path, str_cat(key_path, "[", idx, "]")}; }

  [[noreturn]] void fail_type(const char* expected, const Json& got) const {
    fail(path, ": ", key_path, ": expected ", expected, ", got ", json_type_name(got));
  }
};

// Returns object[key] (object must be an object), or fallback when it is absent or null; fails
// naming the key path when it holds another type.
template <typename T>
T optional_value(const Json& object, const char* key, const T& fallback, const JsonPlace& place) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return fallback;
  if constexpr (std::is_same_v<T, bool>) {
    if (!it->is_boolean()) place.at(key).fail_type("a boolean", *it);
  } else {
    static_assert(std::is_same_v<T, std::string>);
    if (!it->is_string()) place.at(key).fail_type("a string", *it);
  }
  return it->template get<T>();
}

std::string type_of(const Json& json) {
  return json.is_object() && json.contains("type") && json["type"].is_string()
             ? json["type"].get<std::string>()
             : "";
}

bool is_byte_level(const Json& json, bool use_regex, const JsonPlace& place) {
  return type_of(json) == "ByteLevel" &&
         optional_value(json, "use_regex", true, place) == use_regex &&
         !optional_value(json, "add_prefix_space", false, place);
}

std::optional<PreTokenizer> pre_tokenizer_from_split(const Json& split, const JsonPlace& place) {
  if (type_of(split) != "Split" ||
      optional_value<std::string>(split, "behavior", "", place) != "Isolated" ||
      optional_value(split, "invert", false, place) || !split.contains("pattern") ||
      !split["pattern"].is_object() || !split["pattern"].contains("Regex")) {
    return std::nullopt;
  }
  const std::string pattern =
      optional_value<std::string>(split["pattern"], "Regex", "", place.at("pattern"));
  if (pattern == kGpt2Pattern) return PreTokenizer::Gpt2;
  if (pattern == kLlama3Pattern) return PreTokenizer::Llama3;
  if (pattern == kQwen2Pattern) return PreTokenizer::Qwen2;
  return std::nullopt;
}

// Recognises ByteLevel alone (GPT-2), Split(pattern) + ByteLevel without regex (Llama 3,
// Qwen2), and Digits(individual) + ByteLevel (StarCoder, SmolLM).
std::optional<PreTokenizer> recognise_pre_tokenizer(const Json& pre, const JsonPlace& place) {
  if (is_byte_level(pre, true, place)) return PreTokenizer::Gpt2;
  if (type_of(pre) != "Sequence" || !pre.contains("pretokenizers")) return std::nullopt;
  const Json& steps = pre["pretokenizers"];
  if (!steps.is_array() || steps.size() != 2) return std::nullopt;
  const JsonPlace first = place.at("pretokenizers").at(size_t{0});
  const JsonPlace second = place.at("pretokenizers").at(size_t{1});
  if (is_byte_level(steps[1], false, second)) return pre_tokenizer_from_split(steps[0], first);
  if (type_of(steps[0]) == "Digits" &&
      optional_value(steps[0], "individual_digits", false, first) &&
      is_byte_level(steps[1], true, second)) {
    return PreTokenizer::Gpt2IsolatedDigits;
  }
  return std::nullopt;
}

std::vector<std::string> read_merges(const Json& merges, const std::string& path) {
  if (!merges.is_array()) fail(path, ": model.merges must be an array");
  std::vector<std::string> out;
  out.reserve(merges.size());
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const Json& merge = merges[rank];
    if (merge.is_string()) {
      out.push_back(merge.get<std::string>());
    } else if (merge.is_array() && merge.size() == 2 && merge[0].is_string() &&
               merge[1].is_string()) {
      out.push_back(merge[0].get<std::string>() + " " + merge[1].get<std::string>());
    } else {
      fail(path, ": model.merges[", rank, "] is neither \"a b\" nor [\"a\", \"b\"]");
    }
  }
  return out;
}

// The vocabulary is sized by its largest id, so that id must lie below the number of entries
// the file lists (ids are dense; added tokens may repeat vocab entries, which leaves room for a
// few gaps). Checked before anything is sized by it: one stray id of 3e8 would cost gigabytes.
void check_id_range(int64_t max_id, const Json& entries, const Json& added,
                    const std::string& path) {
  const auto num_entries = static_cast<int64_t>(entries.size() + added.size());
  if (max_id < num_entries) return;
  std::string holder;
  for (const auto& [token, id] : entries.items()) {
    if (id.get<int64_t>() == max_id) holder = str_cat("model.vocab[\"", token, "\"]");
  }
  for (size_t i = 0; holder.empty() && i < added.size(); ++i) {
    if (added[i]["id"].get<int64_t>() == max_id) holder = str_cat("added_tokens[", i, "]");
  }
  fail(path, ": ", holder, " has id ", max_id, " but the file lists only ", num_entries,
       " tokens (model.vocab and added_tokens), so ids must lie below ", num_entries);
}

// Fills tokens and kinds from model.vocab and added_tokens; ids must be non-negative and lie
// below the number of entries.
void read_tokens(const Json& json, const std::string& path, BpeVocab& vocab) {
  const auto vocab_it = json["model"].find("vocab");
  if (vocab_it == json["model"].end()) {
    fail(path, ": model.vocab: missing (expected an object of token -> id)");
  }
  const Json& entries = *vocab_it;
  if (!entries.is_object()) {
    fail(path, ": model.vocab: expected an object of token -> id, got ", json_type_name(entries));
  }
  const Json added = json.value("added_tokens", Json::array());
  if (!added.is_array()) fail(path, ": added_tokens must be an array");

  int64_t max_id = -1;
  for (const auto& [token, id] : entries.items()) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() >= INT32_MAX) {
      fail(path, ": model.vocab[\"", token, "\"]: expected a non-negative integer id, got ",
           id.is_number() ? id.dump() : json_type_name(id));
    }
    max_id = std::max(max_id, id.get<int64_t>());
  }
  for (size_t i = 0; i < added.size(); ++i) {
    const Json& token = added[i];
    if (!token.is_object() || !token.contains("id") || !token["id"].is_number_integer() ||
        token["id"].get<int64_t>() < 0 || token["id"].get<int64_t>() >= INT32_MAX ||
        !token.contains("content") || !token["content"].is_string()) {
      fail(path, ": added_tokens[", i, "] needs a non-negative integer id and a string content");
    }
    max_id = std::max(max_id, token["id"].get<int64_t>());
  }
  check_id_range(max_id, entries, added, path);
  vocab.tokens.assign(max_id + 1, "");
  vocab.kinds.assign(max_id + 1, TokenKind::Unused);
  for (const auto& [token, id] : entries.items()) {
    vocab.tokens[id.get<int64_t>()] = token;
    vocab.kinds[id.get<int64_t>()] = TokenKind::Normal;
  }
  for (size_t i = 0; i < added.size(); ++i) {
    const Json& token = added[i];
    const int64_t id = token["id"].get<int64_t>();
    vocab.tokens[id] = token["content"].get<std::string>();
    const bool is_special =
        optional_value(token, "special", false, JsonPlace{path, str_cat("added_tokens[", i, "]")});
    vocab.kinds[id] = is_special ? TokenKind::Control : TokenKind::UserDefined;
  }
}

// Returns true when the post-processor's single-sequence template starts with bos_token, which
// is how Llama 3's tokenizer.json asks for BOS.
// (The recursion into a Sequence is bounded by kMaxJsonDepth, checked when the file was parsed.)
bool template_adds_bos(const Json& post, const std::string& bos_token, const JsonPlace& place) {
  if (!post.is_object() || bos_token.empty()) return false;
  if (type_of(post) == "Sequence" && post.contains("processors") && post["processors"].is_array()) {
    const Json& steps = post["processors"];
    for (size_t i = 0; i < steps.size(); ++i) {
      if (template_adds_bos(steps[i], bos_token, place.at("processors").at(i))) return true;
    }
    return false;
  }
  if (type_of(post) != "TemplateProcessing" || !post.contains("single")) return false;
  const Json& single = post["single"];
  if (!single.is_array() || single.empty() || !single[0].contains("SpecialToken")) return false;
  const Json& special = single[0]["SpecialToken"];
  const JsonPlace special_place = place.at("single").at(size_t{0}).at("SpecialToken");
  if (!special.is_object()) special_place.fail_type("an object", special);
  return optional_value<std::string>(special, "id", "", special_place) == bos_token;
}

int32_t resolve_token(const BpeVocab& vocab, const std::optional<std::string>& text,
                      const std::string& path, const char* what) {
  if (!text || text->empty()) return -1;
  const auto it = std::find(vocab.tokens.begin(), vocab.tokens.end(), *text);
  if (it == vocab.tokens.end()) fail(path, ": ", what, " '", *text, "' is not in the vocabulary");
  return static_cast<int32_t>(it - vocab.tokens.begin());
}

}  // namespace

std::unique_ptr<BpeTokenizer> load_hf_tokenizer_json(const std::string& path,
                                                     const HfTokenizerConfig& config) {
  const Json json = parse_json_text<Json>(read_text_file(path), path);
  if (!json.is_object()) fail(path, ": expected a JSON object, got ", json_type_name(json));
  if (!json.contains("model") || !json["model"].is_object()) fail(path, ": no \"model\" object");
  const Json& model = json["model"];
  const JsonPlace model_place{path, "model"};
  const std::string model_type = optional_value<std::string>(model, "type", "BPE", model_place);
  if (model_type != "BPE") {
    fail(path, ": model.type is '", model_type, "'; Sluice reads BPE tokenizer.json");
  }
  if (optional_value(model, "byte_fallback", false, model_place)) {
    fail(path,
         ": a SentencePiece-style (byte_fallback) BPE tokenizer.json; load the directory's "
         "tokenizer.model instead");
  }
  // NFC normalization (Qwen2) is accepted but not applied: almost all text is already NFC.
  const Json normalizer = json.value("normalizer", Json());
  if (!normalizer.is_null() && type_of(normalizer) != "NFC") {
    fail(path, ": normalizer '", type_of(normalizer), "' is not supported");
  }
  const auto pre_tokenizer = recognise_pre_tokenizer(json.value("pre_tokenizer", Json()),
                                                     JsonPlace{path, "pre_tokenizer"});
  if (!pre_tokenizer) {
    fail(path, ": pre_tokenizer ", json.value("pre_tokenizer", Json()).dump().substr(0, 200),
         " is not one Sluice implements (GPT-2, Llama 3, Qwen2, digit-splitting GPT-2)");
  }

  BpeVocab vocab;
  vocab.source = path;
  read_tokens(json, path, vocab);
  vocab.merges = read_merges(model.value("merges", Json::array()), path);
  vocab.pre_tokenizer = *pre_tokenizer;
  vocab.ignore_merges = optional_value(model, "ignore_merges", false, model_place);
  vocab.bos_id = resolve_token(vocab, config.bos_token, path, "bos_token");
  vocab.eos_id = resolve_token(vocab, config.eos_token, path, "eos_token");
  vocab.add_bos = config.add_bos_token.value_or(
      template_adds_bos(json.value("post_processor", Json()), config.bos_token.value_or(""),
                        JsonPlace{path, "post_processor"}));
  vocab.add_eos = config.add_eos_token.value_or(false);
  for (int32_t id = 0; id < static_cast<int32_t>(vocab.tokens.size()); ++id) {
    if (vocab.kinds[id] == TokenKind::Control && id != vocab.eos_id &&
        is_end_of_turn_marker(vocab.tokens[id])) {
      vocab.extra_stop_ids.push_back(id);
    }
  }
  return std::make_unique<BpeTokenizer>(std::move(vocab));
}

}  // namespace sluice
