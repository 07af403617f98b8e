#include "tests/support/reference_data.h"

#include <nlohmann/json.hpp>

#include "tests/support/test_paths.h"

namespace sluice::test {

namespace {

nlohmann::json load_expected(const std::string& name) {
  return nlohmann::json::parse(read_file(shared_path("models/stories260K/expected/" + name)));
}

}  // namespace

std::vector<ModelForm> stories260k_forms() {
  return {
      {"llama2c", "models/stories260K/llama2c/stories260K.bin", "logits_first3_decode.json", true},
      {"hf", "models/stories260K/hf", "logits_first3_decode.json", true},
      {"hf-bf16", "models/stories260K/hf-bf16", "logits_first3_decode_bf16.json", false},
      {"gguf-f32", "models/stories260K/gguf/stories260K-f32.gguf", "logits_first3_decode.json",
       true},
      {"gguf-f16", "models/stories260K/gguf/stories260K-f16.gguf", "logits_first3_decode_f16.json",
       true},
      {"gguf-q8_0", "models/stories260K/gguf/stories260K-q8_0.gguf",
       "logits_first3_decode_q8_0.json", false},
  };
}

std::vector<int32_t> reference_prompt_ids() {
  return load_expected("prompt.json")["prompt_ids"].get<std::vector<int32_t>>();
}

std::vector<int32_t> reference_generated_ids() {
  return load_expected("greedy_n256.json")["generated_ids"].get<std::vector<int32_t>>();
}

std::vector<int32_t> reference_tokens() {
  return load_expected("greedy_n256.json")["tokens"].get<std::vector<int32_t>>();
}

std::vector<ReferenceLogits> reference_logits(const std::string& file_name) {
  std::vector<ReferenceLogits> out;
  const nlohmann::json doc = load_expected(file_name);
  for (const auto& entry : doc["entries"]) {
    ReferenceLogits r;
    r.position = entry["position"].get<int>();
    r.input_token = entry["input_token"].get<int>();
    r.logits = entry["logits"].get<std::vector<float>>();
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace sluice::test
