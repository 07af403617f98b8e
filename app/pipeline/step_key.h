// A pipeline step's cache key: the SHA-256 of everything that determines its results — its
// options as written, its prompt or rubric, the model file's hash, the sampling parameters, and
// the keys of the steps it reads. A step whose key is unchanged is not run again: its results
// are kept in the pipeline's folder under the key (changing a filter's threshold re-runs the
// filter and what follows it, never a model call; changing the rubric re-judges but does not
// regenerate).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "app/generation_spec.h"

namespace sluice {

// Returns the SHA-256 (hex) of parts as compact JSON (keys in the order given).
std::string step_key(const nlohmann::ordered_json& parts);

// What of a generation spec determines its outputs, for a key: spec_to_json without where it
// runs (device, threads) and without the input path when the input is keyed by its digest.
nlohmann::ordered_json spec_key_parts(const GenerationSpec& spec);

// Returns the SHA-256 of a model (a file, or a Hugging Face folder's files in name order) or any
// file, remembered in cache_path (a JSON file) by path, size and modification time so a
// multi-gigabyte model is hashed once. Throws Error naming the file when it cannot be read.
std::string file_digest(const std::string& path, const std::string& cache_path);

}  // namespace sluice
