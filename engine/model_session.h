// A model ready to serve: its weights and its tokenizer (its backend comes from make_backend).
// Shared by the CLI commands, the GUI worker and the server so they load models the same way.
#pragma once

#include <memory>
#include <string>

// The callers that open a session build its backend (engine/backend/make_backend.h).
#include "engine/backend/make_backend.h"
#include "engine/core/dtype.h"
#include "engine/model/model.h"
#include "engine/tokenizer/tokenizer.h"

namespace sluice {

struct ModelSession {
  std::unique_ptr<Model> model;
  std::unique_ptr<Tokenizer> tokenizer;
};

// Loads the model at model_path and its tokenizer (from tokenizer_path when given, else from
// the model's own files). Throws Error (naming the file) or Cancelled.
ModelSession open_model_session(const std::string& model_path, const std::string& tokenizer_path,
                                const LoadOptions& options = {});

// A dummy-weight model of a published shape (see dummy_model.h) with the tokenizer at
// tokenizer_path, or a byte tokenizer when it is empty; num_layers > 0 keeps that many layers.
ModelSession open_dummy_session(const std::string& preset, const std::string& tokenizer_path,
                                DType dtype, int num_layers = 0);

}  // namespace sluice
