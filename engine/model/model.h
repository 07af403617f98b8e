// A loaded model: configuration, weights by role, where they came from, and the chat template.
// Loading maps the files, validates every tensor against the configuration and the file sizes,
// reads the pages in with progress, and can be cancelled.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/core/mapped_file.h"
#include "engine/model/model_config.h"
#include "engine/model/model_weights.h"

namespace sluice {

enum class ModelFormat : uint8_t { HuggingFace, Gguf, Llama2c, Dummy };

struct LoadProgress {
  double fraction = 0.0;  // 0..1
  std::string stage;      // "reading config", "reading blk.3.attn_q.weight", ...
};

struct LoadOptions {
  // Called as loading advances; return false to cancel (load_model then throws Cancelled).
  std::function<bool(const LoadProgress&)> on_progress;
  // Read every weight page now (so the first step is not slowed by page faults).
  bool prefault = true;
};

struct Model {
  std::string path;  // what the user gave: a directory or a file
  ModelFormat format = ModelFormat::Gguf;
  ModelConfig config;
  ModelWeights weights;
  std::string chat_template;         // empty when the files carry none
  std::string chat_template_origin;  // where chat_template was read, for its error messages
  std::string tokenizer_path;  // where the tokenizer was found (the GGUF file itself for GGUF)
  std::vector<std::shared_ptr<const MappedFile>> files;  // keep the maps alive
  std::vector<std::vector<uint8_t>> owned_storage;       // weights made in memory (dummy models)

  // Bytes of all weights as stored.
  size_t weight_bytes() const;
  // Elements of all weights (a tied head counted once).
  int64_t parameter_count() const;
  // The elements one token's forward pass uses: all but the experts it is not routed to (a
  // mixture of experts uses num_experts_used of num_experts); parameter_count() for a dense model.
  int64_t active_parameter_count() const;
  // "gguf", "safetensors", "llama2c" or "dummy".
  std::string format_name() const;
  // The stored element types, e.g. "F32" or "Q8_0+F16+F32".
  std::string weight_dtypes() const;
};

// Loads a Hugging Face directory (config.json + model.safetensors or a sharded index), a GGUF
// file, or a llama2.c .bin. Throws Error naming the file and tensor at fault, Cancelled when
// on_progress returns false. tokenizer_path, when given, overrides where the tokenizer is looked
// for (recorded in Model::tokenizer_path; the tokenizer itself is loaded separately).
std::unique_ptr<Model> load_model(const std::string& path, const LoadOptions& options = {},
                                  const std::string& tokenizer_path = "");

// Returns where the tokenizer of the model at model_path is, without loading weights: the
// directory (Hugging Face), the file itself (GGUF) or the tokenizer beside a llama2.c
// checkpoint. Throws Error when none is found.
std::string locate_tokenizer(const std::string& model_path);

}  // namespace sluice
