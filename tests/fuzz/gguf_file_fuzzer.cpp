// Feeds GGUF files: the container (metadata table, tensor directory), then what loading a model
// reads from it: the model configuration and the embedded vocabulary, whose tokenizer then
// encodes and decodes.
#include <cstddef>
#include <cstdint>

#include "engine/core/error.h"
#include "engine/model/gguf_config.h"
#include "engine/model/gguf_reader.h"
#include "engine/tokenizer/tokenizer_loader.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/fuzz_input_file.h"
#include "tests/fuzz/tensor_view_check.h"
#include "tests/fuzz/tokenizer_exercise.h"

using namespace sluice;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = fuzz::write_input_file("model.gguf", data, size);
  std::unique_ptr<GgufFile> gguf;
  try {
    gguf = GgufFile::open(path);
  } catch (const Error& error) {
    fuzz::require_names_file(error, path);
    return 0;
  }
  for (const GgufTensorInfo& tensor : gguf->tensors()) {
    fuzz::check_tensor_view(*gguf->file(), tensor.name, tensor.shape, tensor.dtype, tensor.data,
                            tensor.num_bytes);
  }
  try {
    (void)read_gguf_config(*gguf);
  } catch (const Error& error) {
    fuzz::require_names_file(error, path);
  }
  try {
    const auto tokenizer = load_gguf_tokenizer(*gguf);
    fuzz::exercise_tokenizer(*tokenizer, path);
  } catch (const Error& error) {
    fuzz::require_names_file(error, path);
  }
  return 0;
}
