#include "engine/model/model.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "engine/core/error.h"
#include "tests/support/reference_data.h"
#include "tests/support/test_paths.h"

namespace sluice {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

// Expects load_model to throw an Error whose message contains every fragment.
void expect_load_error(const std::string& path, const std::vector<std::string>& fragments) {
  try {
    load_model(path);
    FAIL() << "expected an error loading " << path;
  } catch (const Error& e) {
    for (const auto& f : fragments) EXPECT_THAT(e.what(), HasSubstr(f)) << "message: " << e.what();
  }
}

// A copy of the stories260K HF directory that a test may damage.
std::string copy_hf_dir(const std::string& name) {
  const std::string dir = test::make_temp_dir(name);
  for (const auto& entry : fs::directory_iterator(test::shared_path("models/stories260K/hf"))) {
    fs::copy_file(entry.path(), fs::path(dir) / entry.path().filename());
  }
  return dir;
}

TEST(ModelLoader, EveryFormHasTheStories260kShape) {
  for (const auto& form : test::stories260k_forms()) {
    SCOPED_TRACE(form.name);
    const auto model = load_model(test::shared_path(form.path));
    const ModelConfig& c = model->config;
    EXPECT_EQ(c.hidden_size, 64);
    EXPECT_EQ(c.intermediate_size, 172);
    EXPECT_EQ(c.num_layers, 5);
    EXPECT_EQ(c.num_heads, 8);
    EXPECT_EQ(c.num_kv_heads, 4);
    EXPECT_EQ(c.head_dim, 8);
    EXPECT_EQ(c.vocab_size, 512);
    EXPECT_EQ(c.max_position_embeddings, 512);
    EXPECT_TRUE(c.tie_word_embeddings);
    EXPECT_EQ(c.bos_token_id, 1);
    EXPECT_EQ(c.eos_token_id, 2);
    const bool is_hf = model->format == ModelFormat::HuggingFace;
    EXPECT_EQ(c.rope_layout, is_hf ? RopeLayout::RotateHalf : RopeLayout::Interleaved);
    EXPECT_EQ(model->weights.layers.size(), 5u);
    EXPECT_EQ(model->weights.lm_head.data, model->weights.token_embedding.data);  // tied
    EXPECT_FALSE(model->tokenizer_path.empty());
  }
}

TEST(ModelLoader, ChatTemplatesComeFromTheFiles) {
  EXPECT_THAT(load_model(test::shared_path("models/stories260K/hf"))->chat_template,
              HasSubstr("message['content']"));
  EXPECT_FALSE(load_model(test::shared_path("models/stories260K/gguf/stories260K-f32.gguf"))
                   ->chat_template.empty());
  EXPECT_TRUE(load_model(test::shared_path("models/stories260K/llama2c/stories260K.bin"))
                  ->chat_template.empty());
}

TEST(ModelLoader, WeightTypesAreReported) {
  EXPECT_EQ(load_model(test::shared_path("models/stories260K/hf-bf16"))->weight_dtypes(), "BF16");
  EXPECT_EQ(load_model(test::shared_path("models/stories260K/gguf/stories260K-q8_0.gguf"))
                ->weight_dtypes(),
            "F16+F32+Q8_0");
}

TEST(ModelLoader, ProgressAdvancesToOneAndLoadingCanBeCancelled) {
  const std::string path = test::shared_path("models/stories260K/gguf/stories260K-f32.gguf");
  std::vector<double> fractions;
  LoadOptions options;
  options.on_progress = [&](const LoadProgress& p) {
    fractions.push_back(p.fraction);
    return true;
  };
  load_model(path, options);
  ASSERT_GE(fractions.size(), 3u);
  EXPECT_TRUE(std::is_sorted(fractions.begin(), fractions.end()));
  EXPECT_EQ(fractions.back(), 1.0);

  int calls = 0;
  options.on_progress = [&](const LoadProgress&) { return ++calls < 3; };
  EXPECT_THROW(load_model(path, options), Cancelled);
  EXPECT_EQ(calls, 3);
}

TEST(ModelLoader, TruncatedSafetensorsNamesFileAndTensor) {
  const std::string dir = copy_hf_dir("truncated-st");
  const std::string file = dir + "/model.safetensors";
  const std::string bytes = test::read_file(file);
  test::write_file(file, bytes.substr(0, bytes.size() - 1000));
  expect_load_error(dir, {"model.safetensors", "tensor", "truncated"});
  test::write_file(file, bytes.substr(0, 5));
  expect_load_error(dir, {"model.safetensors", "truncated"});
}

TEST(ModelLoader, SafetensorsHeaderThatIsNotJsonIsRejected) {
  const std::string dir = copy_hf_dir("bad-json-st");
  std::string bytes = test::read_file(dir + "/model.safetensors");
  bytes[8] = '!';  // first byte of the JSON header
  test::write_file(dir + "/model.safetensors", bytes);
  expect_load_error(dir, {"model.safetensors", "JSON"});
}

std::string deeply_nested_array() {
  return std::string(100000, '[') + std::string(100000, ']');
}

TEST(ModelLoader, ConfigJsonSyntaxErrorNamesLineAndColumn) {
  const std::string dir = copy_hf_dir("config-syntax");
  test::write_file(dir + "/config.json",
                   "{\n  \"model_type\": \"llama\",\n  \"hidden_size\": 64,,\n}\n");
  // The second comma on line 3 is where the JSON goes wrong; the message is Sluice's own, not
  // the parser's exception text.
  expect_load_error(dir, {dir + "/config.json: not valid JSON at line 3, column 21: "});
  try {
    load_model(dir);
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), Not(HasSubstr("json.exception")));
  }
  const std::string index_dir = copy_hf_dir("index-syntax");
  test::write_file(index_dir + "/model.safetensors.index.json", R"({"weight_map": {"a": "b",}})");
  expect_load_error(
      index_dir,
      {index_dir + "/model.safetensors.index.json: not valid JSON at line 1, column 26"});
}

TEST(ModelLoader, JsonNestedPastTheLimitIsAnErrorNamingFileAndPosition) {
  const std::string deep = deeply_nested_array();
  {
    const std::string dir = copy_hf_dir("config-deep");
    std::string config = test::read_file(dir + "/config.json");
    config.insert(config.find('{') + 1, "\"x\": " + deep + ",");
    test::write_file(dir + "/config.json", config);
    expect_load_error(dir, {dir + "/config.json", "nested deeper than 256", "column"});
  }
  {
    // Deep nesting in a safetensors header (its __metadata__, which loading otherwise skips).
    const std::string dir = copy_hf_dir("header-deep");
    const std::string bytes = test::read_file(dir + "/model.safetensors");
    uint64_t header_bytes = 0;
    std::memcpy(&header_bytes, bytes.data(), 8);
    std::string header = bytes.substr(8, header_bytes);
    header.insert(header.find('{') + 1, "\"__metadata__\": {\"x\": " + deep + "},");
    const uint64_t new_header_bytes = header.size();
    std::string damaged(8, '\0');
    std::memcpy(damaged.data(), &new_header_bytes, 8);
    test::write_file(dir + "/model.safetensors", damaged + header + bytes.substr(8 + header_bytes));
    expect_load_error(dir, {dir + "/model.safetensors", "nested deeper than 256", "column"});
  }
  {
    const std::string dir = copy_hf_dir("index-deep");
    test::write_file(dir + "/model.safetensors.index.json",
                     "{\"metadata\": " + deep + ", \"weight_map\": {}}");
    expect_load_error(dir, {dir + "/model.safetensors.index.json", "nested deeper than 256"});
  }
}

TEST(ModelLoader, ConfigShapesThatDisagreeWithWeightsNameTheTensor) {
  const std::string dir = copy_hf_dir("bad-config");
  auto config = nlohmann::json::parse(test::read_file(dir + "/config.json"));
  config["intermediate_size"] = 128;
  test::write_file(dir + "/config.json", config.dump());
  expect_load_error(dir, {"model.layers.0.mlp.gate_proj.weight", "[172, 64]", "[128, 64]"});
}

TEST(ModelLoader, UnsupportedModelTypeIsNamed) {
  const std::string dir = copy_hf_dir("bad-type");
  auto config = nlohmann::json::parse(test::read_file(dir + "/config.json"));
  config["model_type"] = "gpt_neox";
  test::write_file(dir + "/config.json", config.dump());
  expect_load_error(dir, {"config.json", "gpt_neox"});
}

// Keys of the wrong type or range name the file and the key instead of ending the load with
// nlohmann's type_error (which a model file must never reach).
TEST(ModelLoader, WrongTypedOrOutOfRangeConfigValuesNameTheKey) {
  const struct {
    const char* key;
    nlohmann::json value;
    const char* fragment;
  } cases[] = {
      {"model_type", 7, "model_type must be a string, not a number"},
      {"hidden_act", nlohmann::json::array(), "hidden_act must be a string, not an array"},
      {"rope_theta", 1e300, "rope_theta 1e+300 is out of range for a float"},
      {"rope_scaling", {{"rope_type", false}}, "rope_type must be a string, not a boolean"},
  };
  for (const auto& c : cases) {
    const std::string dir = copy_hf_dir(std::string("typed-") + c.key);
    auto config = nlohmann::json::parse(test::read_file(dir + "/config.json"));
    config[c.key] = c.value;
    test::write_file(dir + "/config.json", config.dump());
    expect_load_error(dir, {dir + "/config.json: ", c.fragment});
  }
  // A chat template list whose entries carry a non-string name is not the default template.
  const std::string dir = copy_hf_dir("template-name");
  auto tokenizer_config = nlohmann::json::parse(test::read_file(dir + "/tokenizer_config.json"));
  tokenizer_config["chat_template"] = nlohmann::json::array(
      {{{"name", 3}, {"template", "x"}}, {{"name", "default"}, {"template", "{{ 'ok' }}"}}});
  test::write_file(dir + "/tokenizer_config.json", tokenizer_config.dump());
  EXPECT_EQ(load_model(dir)->chat_template, "{{ 'ok' }}");
}

TEST(ModelLoader, MissingWeightsFileIsReported) {
  const std::string dir = copy_hf_dir("no-weights");
  fs::remove(dir + "/model.safetensors");
  expect_load_error(dir, {"model.safetensors"});
}

TEST(ModelLoader, TruncatedLlama2cCheckpointIsReported) {
  const std::string dir = test::make_temp_dir("l2c");
  const std::string bytes =
      test::read_file(test::shared_path("models/stories260K/llama2c/stories260K.bin"));
  test::write_file(dir + "/stories260K.bin", bytes.substr(0, bytes.size() / 2));
  expect_load_error(dir + "/stories260K.bin", {"stories260K.bin", "truncated"});
}

TEST(ModelLoader, Llama2cWithoutTokenizerSaysSo) {
  const std::string dir = test::make_temp_dir("l2c-notok");
  fs::copy_file(test::shared_path("models/stories260K/llama2c/stories260K.bin"),
                dir + "/stories260K.bin");
  expect_load_error(dir + "/stories260K.bin", {"no tokenizer", "--tokenizer"});
}

TEST(ModelLoader, GgufWithBadMagicIsReported) {
  const std::string dir = test::make_temp_dir("gguf-magic");
  std::string bytes =
      test::read_file(test::shared_path("models/stories260K/gguf/stories260K-f32.gguf"));
  bytes[0] = 'X';
  test::write_file(dir + "/model.gguf", bytes);
  expect_load_error(dir + "/model.gguf", {"model.gguf", "bad magic"});
}

TEST(ModelLoader, TruncatedGgufNamesATensor) {
  const std::string dir = test::make_temp_dir("gguf-cut");
  const std::string bytes =
      test::read_file(test::shared_path("models/stories260K/gguf/stories260K-f32.gguf"));
  test::write_file(dir + "/model.gguf", bytes.substr(0, bytes.size() - 4096));
  expect_load_error(dir + "/model.gguf", {"model.gguf", "tensor", "past the end"});
}

TEST(ModelLoader, MissingPathIsReported) {
  expect_load_error("/nonexistent/model.gguf", {"/nonexistent/model.gguf"});
}

}  // namespace
}  // namespace sluice
