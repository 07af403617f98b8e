#include "engine/model_session.h"

#include "engine/core/error.h"
#include "engine/model/dummy_model.h"
#include "engine/tokenizer/byte_tokenizer.h"
#include "engine/tokenizer/tokenizer_loader.h"

namespace sluice {

ModelSession open_model_session(const std::string& model_path, const std::string& tokenizer_path,
                                const LoadOptions& options) {
  ModelSession session;
  session.model = load_model(model_path, options, tokenizer_path);
  session.tokenizer =
      load_tokenizer_file(session.model->tokenizer_path, session.model->config.vocab_size);
  return session;
}

ModelSession open_dummy_session(const std::string& preset, const std::string& tokenizer_path,
                                DType dtype, int num_layers) {
  ModelSession session;
  session.model = make_dummy_model(preset, dtype, 0, num_layers);
  if (tokenizer_path.empty()) {
    session.tokenizer = std::make_unique<ByteTokenizer>(session.model->config.vocab_size);
  } else {
    session.tokenizer = load_tokenizer_file(tokenizer_path);
    if (session.tokenizer->vocab_size() > session.model->config.vocab_size) {
      fail(tokenizer_path, ": ", session.tokenizer->vocab_size(),
           " tokens do not fit the dummy model's vocabulary of ", session.model->config.vocab_size);
    }
  }
  return session;
}

}  // namespace sluice
