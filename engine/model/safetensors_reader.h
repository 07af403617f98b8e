// safetensors reader: an 8-byte little-endian header length, a JSON header mapping tensor names
// to {dtype, shape, data_offsets}, then the byte buffer. Every offset and size is checked
// against the header and the file; tensors stay in the memory map.
// Format: https://huggingface.co/docs/safetensors/index (section "Format")
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/core/mapped_file.h"
#include "engine/model/tensor_directory.h"

namespace sluice {

// Maps and parses one .safetensors file, adding its tensors to `directory`; returns the map
// (keep it alive while the tensors are used). Throws Error naming the file and the tensor.
std::shared_ptr<const MappedFile> read_safetensors(const std::string& path,
                                                   TensorDirectory& directory);

// Reads a sharded checkpoint's index (model.safetensors.index.json) and every shard it names,
// checking that each tensor sits in the shard the index says. Returns the maps of all shards.
std::vector<std::shared_ptr<const MappedFile>> read_safetensors_sharded(
    const std::string& index_path, TensorDirectory& directory);

}  // namespace sluice
