// Reads a ModelConfig from GGUF metadata ({arch}.embedding_length, {arch}.block_count, ...).
#pragma once

#include <string>

#include "engine/model/gguf_reader.h"
#include "engine/model/model_config.h"

namespace sluice {

// The GGUF metadata keys of architecture arch's fields ("llama.block_count", ...).
ConfigKeys gguf_config_keys(const std::string& arch);

// Builds and validates the configuration. Throws Error naming the file and key.
ModelConfig read_gguf_config(const GgufFile& gguf);

}  // namespace sluice
