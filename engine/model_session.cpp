#include "engine/model_session.h"

#include "engine/backend/cpu_backend.h"
#include "engine/backend/cuda_model_support.h"
#include "engine/backend/device.h"
#ifdef SLUICE_HAS_CUDA
#include "engine/backend/cuda/cuda_backend.h"
#endif
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
                                DType dtype) {
  ModelSession session;
  session.model = make_dummy_model(preset, dtype);
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

std::unique_ptr<Backend> make_backend(const Model& model, const std::string& device,
                                      int num_threads) {
  const auto make_cpu = [&] {
    return std::make_unique<CpuBackend>(model, CpuBackendOptions{.num_threads = num_threads});
  };
  const int index = resolve_device(device);
  if (index < 0) return make_cpu();
  // "auto" picks the CPU for a model the CUDA primitives cannot run yet; an explicit cuda:N
  // gets the CUDA backend's message naming what is missing.
  if (device == "auto" && !cuda_unsupported_features(model.config).empty()) return make_cpu();
#ifdef SLUICE_HAS_CUDA
  return std::make_unique<CudaBackend>(model, CudaBackendOptions{.device_index = index});
#else
  fail("device ", device, ": this build has no CUDA backend");  // resolve_device refused it already
#endif
}

}  // namespace sluice
