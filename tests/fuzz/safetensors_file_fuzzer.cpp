// Feeds .safetensors files: the header length, the JSON header's entries (dtype, shape,
// data_offsets) checked against the byte buffer, and the tensors they describe.
#include <cstddef>
#include <cstdint>

#include "engine/core/error.h"
#include "engine/model/safetensors_reader.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/fuzz_input_file.h"
#include "tests/fuzz/tensor_view_check.h"

using namespace sluice;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = fuzz::write_input_file("model.safetensors", data, size);
  TensorDirectory directory;
  std::shared_ptr<const MappedFile> file;
  try {
    file = read_safetensors(path, directory);
  } catch (const Error& error) {
    fuzz::require_names_file(error, path);
    return 0;
  }
  for (const auto& [name, entry] : directory.entries()) {
    const std::optional<DType> dtype =
        entry.dtype_supported ? std::optional(entry.tensor.dtype) : std::nullopt;
    fuzz::check_tensor_view(*file, name, entry.tensor.shape, dtype, entry.tensor.data,
                            entry.tensor.num_bytes);
  }
  return 0;
}
