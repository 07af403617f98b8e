// Reads a Hugging Face config.json (LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM)
// into a ModelConfig, with transformers' defaults for absent keys.
#pragma once

#include <string>

#include "engine/model/model_config.h"

namespace sluice {

// Parses config.json at path. Throws Error naming the file and key for a missing key, a wrong
// type, an unsupported model_type or an unsupported rope_scaling.
ModelConfig read_hf_config(const std::string& path);

// True when config.json wraps the text model in text_config (a multimodal checkpoint such as
// Qwen3.5's, whose language model's tensors are under model.language_model.).
bool hf_config_is_multimodal(const std::string& path);

// Returns tokenizer_config.json's chat_template (a string, or the "default" entry of a list), or
// "" when the file or the key is absent. Throws Error when the file exists but is not JSON.
std::string read_hf_chat_template(const std::string& tokenizer_config_path);

}  // namespace sluice
