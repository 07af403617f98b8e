// tokenizer.json (byte-level BPE): a tokenizer.json is written from the GPT-2 vocabulary and
// merges of ggml-vocab-gpt-2.gguf in the two layouts Hugging Face uses for GPT-2-style
// pre-tokenization, then checked against llama.cpp's expected ids for that vocabulary.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>

#include "engine/core/error.h"
#include "engine/model/gguf_reader.h"
#include "engine/tokenizer/tokenizer_loader.h"
#include "tests/support/test_paths.h"
#include "tests/unit/tokenizer/tokenizer_test_data.h"

namespace sluice {
namespace {

using Json = nlohmann::json;
using ::testing::HasSubstr;

constexpr std::string_view kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

Json gpt2_tokenizer_json(const Json& pre_tokenizer) {
  const auto gguf =
      GgufFile::open(test::shared_path("tokenizers/llamacpp-vocab/ggml-vocab-gpt-2.gguf"));
  const auto& tokens = gguf->get_string_array("tokenizer.ggml.tokens");
  Json vocab = Json::object();
  for (size_t id = 0; id + 1 < tokens.size(); ++id) vocab[tokens[id]] = id;  // all but the last
  Json json;
  json["model"] = {{"type", "BPE"},
                   {"vocab", vocab},
                   {"merges", gguf->get_string_array("tokenizer.ggml.merges")}};
  json["added_tokens"] =
      Json::array({{{"id", tokens.size() - 1}, {"content", tokens.back()}, {"special", true}}});
  json["normalizer"] = nullptr;
  json["pre_tokenizer"] = pre_tokenizer;
  json["decoder"] = {{"type", "ByteLevel"}};
  return json;
}

std::string write_dir(const Json& tokenizer_json, const std::string& tokenizer_config) {
  const std::string dir = test::make_temp_dir("tokenizer-json");
  test::write_file(dir + "/tokenizer.json", tokenizer_json.dump());
  if (!tokenizer_config.empty()) test::write_file(dir + "/tokenizer_config.json", tokenizer_config);
  return dir;
}

void check_gpt2_vectors(const Tokenizer& tokenizer) {
  const std::string base = test::shared_path("tokenizers/llamacpp-vocab/ggml-vocab-gpt-2.gguf");
  const auto inputs = test::read_vocab_test_inputs(base + ".inp");
  const auto expected = test::read_vocab_test_outputs(base + ".out");
  ASSERT_EQ(inputs.size(), expected.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const auto ids = tokenizer.encode(inputs[i], {.add_bos = false});
    EXPECT_EQ(ids, expected[i]) << "string " << i << ": \"" << inputs[i] << "\"";
    EXPECT_EQ(tokenizer.decode(ids), inputs[i]);
  }
}

TEST(HfTokenizerJson, ByteLevelPreTokenizer) {
  const Json pre = {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}};
  const std::string dir = write_dir(
      gpt2_tokenizer_json(pre), R"({"bos_token": "<|endoftext|>", "eos_token": "<|endoftext|>"})");
  const auto tokenizer = load_hf_tokenizer(dir);
  EXPECT_EQ(tokenizer->vocab_size(), 50257);
  EXPECT_EQ(tokenizer->eos_id(), 50256);
  EXPECT_EQ(tokenizer->bos_id(), 50256);
  EXPECT_FALSE(tokenizer->add_bos_default());
  EXPECT_EQ(tokenizer->token_kind(50256), TokenKind::Control);
  check_gpt2_vectors(*tokenizer);
}

TEST(HfTokenizerJson, SplitThenByteLevelAndBosTemplate) {
  const Json split = {{"type", "Split"},
                      {"pattern", {{"Regex", kGpt2Pattern}}},
                      {"behavior", "Isolated"},
                      {"invert", false}};
  const Json byte_level = {
      {"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}};
  Json json = gpt2_tokenizer_json({{"type", "Sequence"}, {"pretokenizers", {split, byte_level}}});
  // Llama 3's way of asking for BOS: a template that starts with it.
  json["post_processor"] = {{"type", "TemplateProcessing"},
                            {"single",
                             {{{"SpecialToken", {{"id", "<|endoftext|>"}, {"type_id", 0}}}},
                              {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}}}};
  const auto tokenizer = load_hf_tokenizer(write_dir(json, R"({"bos_token": "<|endoftext|>"})"));
  EXPECT_TRUE(tokenizer->add_bos_default());
  EXPECT_EQ(tokenizer->encode("Hello world", {.add_bos = true}),
            (std::vector<int32_t>{50256, 15496, 995}));
  check_gpt2_vectors(*tokenizer);
}

TEST(HfTokenizerJson, RejectsWhatItCannotTokenize) {
  const Json byte_level = {{"type", "ByteLevel"}, {"use_regex", true}};
  Json unigram = gpt2_tokenizer_json(byte_level);
  unigram["model"]["type"] = "Unigram";
  EXPECT_THAT([&] { load_hf_tokenizer(write_dir(unigram, "")); },
              ::testing::ThrowsMessage<Error>(HasSubstr("model.type is 'Unigram'")));
  const Json unknown_pre = gpt2_tokenizer_json({{"type", "Whitespace"}});
  EXPECT_THAT([&] { load_hf_tokenizer(write_dir(unknown_pre, "")); },
              ::testing::ThrowsMessage<Error>(HasSubstr("pre_tokenizer")));
  Json bad_merge = gpt2_tokenizer_json(byte_level);
  bad_merge["model"]["merges"][3] = 42;
  EXPECT_THAT([&] { load_hf_tokenizer(write_dir(bad_merge, "")); },
              ::testing::ThrowsMessage<Error>(HasSubstr("model.merges[3]")));
  const std::string dir = test::make_temp_dir("tokenizer-json-bad");
  test::write_file(dir + "/tokenizer.json", "{\"model\": ");
  EXPECT_THAT([&] { load_tokenizer_file(dir + "/tokenizer.json"); },
              ::testing::ThrowsMessage<Error>(HasSubstr(dir + "/tokenizer.json: not valid JSON")));
}

// Expects loading the directory's tokenizer to fail with a message holding every fragment.
void expect_tokenizer_error(const std::string& dir, const std::vector<std::string>& fragments) {
  try {
    load_hf_tokenizer(dir);
    ADD_FAILURE() << "expected an Error for " << dir;
  } catch (const Error& e) {
    for (const std::string& fragment : fragments) {
      EXPECT_THAT(e.what(), HasSubstr(fragment)) << std::string(e.what()).substr(0, 300);
    }
  }
}

TEST(HfTokenizerJson, WrongTypedFieldsNameTheFileAndKeyPath) {
  const Json byte_level = {{"type", "ByteLevel"}, {"use_regex", true}};
  struct Case {
    std::function<void(Json&)> damage;
    std::string expected;
  };
  const Case cases[] = {
      {[](Json& j) { j["model"]["type"] = 7; }, "model.type: expected a string, got a number"},
      {[](Json& j) { j["model"]["byte_fallback"] = "no"; },
       "model.byte_fallback: expected a boolean, got a string"},
      {[](Json& j) { j["model"]["ignore_merges"] = 1; },
       "model.ignore_merges: expected a boolean, got a number"},
      {[](Json& j) { j["pre_tokenizer"]["use_regex"] = "yes"; },
       "pre_tokenizer.use_regex: expected a boolean, got a string"},
      {[](Json& j) { j["added_tokens"][0]["special"] = "true"; },
       "added_tokens[0].special: expected a boolean, got a string"},
      {[](Json& j) { j["model"]["vocab"]["!"] = "0"; },
       "model.vocab[\"!\"]: expected a non-negative integer id, got a string"},
      {[](Json& j) { j["model"].erase("vocab"); }, "model.vocab: missing"},
      {[](Json& j) {
         j["post_processor"] = {{"type", "TemplateProcessing"},
                                {"single", Json::array({{{"SpecialToken", "oops"}}})}};
       },
       "post_processor.single[0].SpecialToken: expected an object, got a string"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.expected);
    Json json = gpt2_tokenizer_json(byte_level);
    c.damage(json);
    const std::string dir = write_dir(json, R"({"bos_token": "<|endoftext|>"})");
    expect_tokenizer_error(dir, {dir + "/tokenizer.json: " + c.expected});
  }
}

TEST(HfTokenizerJson, JsonErrorsNameLineAndColumnAndDepthIsLimited) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  const std::string dir = test::make_temp_dir("tokenizer-json-position");
  test::write_file(dir + "/tokenizer.json", "{\n  \"model\": {\"type\": \"BPE\",}\n}\n");
  // The '}' after the trailing comma: line 2, column 27.
  expect_tokenizer_error(dir, {dir + "/tokenizer.json: not valid JSON", "line 2, column 27"});
  test::write_file(dir + "/tokenizer.json", "{\"normalizer\": " + deep + "}");
  expect_tokenizer_error(dir,
                         {dir + "/tokenizer.json", "line 1, column " + std::to_string(16 + 255),
                          "nested deeper than 256"});

  const Json byte_level = {{"type", "ByteLevel"}, {"use_regex", true}};
  const std::string config_dir =
      write_dir(gpt2_tokenizer_json(byte_level), "{\"bos_token\": \"a\",\n\"eos_token\": x}");
  expect_tokenizer_error(
      config_dir, {config_dir + "/tokenizer_config.json: not valid JSON", "line 2, column 14"});
  test::write_file(config_dir + "/tokenizer_config.json", "{\"extra\": " + deep + "}");
  expect_tokenizer_error(config_dir,
                         {config_dir + "/tokenizer_config.json", "nested deeper than 256"});
}

}  // namespace
}  // namespace sluice
