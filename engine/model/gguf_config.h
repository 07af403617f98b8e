// Reads a ModelConfig from GGUF metadata ({arch}.embedding_length, {arch}.block_count, ...).
#pragma once

#include "engine/model/gguf_reader.h"
#include "engine/model/model_config.h"

namespace sluice {

// Builds and validates the configuration. Throws Error naming the file and key.
ModelConfig read_gguf_config(const GgufFile& gguf);

}  // namespace sluice
