// Feeds llama2.c checkpoints (.bin): the seven-field header checked against the file size, the
// configuration it implies and the fixed layout of fp32 tensors after it.
#include <cstddef>
#include <cstdint>

#include "engine/core/error.h"
#include "engine/model/llama2c_reader.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/fuzz_input_file.h"
#include "tests/fuzz/tensor_view_check.h"

using namespace sluice;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = fuzz::write_input_file("model.bin", data, size);
  const bool looks_like_checkpoint = is_llama2c_file(path);
  Llama2cCheckpoint checkpoint;
  try {
    checkpoint = read_llama2c(path);
  } catch (const Error& error) {
    // is_llama2c_file recognises the format by the header's size arithmetic alone; a file it
    // accepts may still hold values the reader refuses (a vocabulary too small for BOS), with an
    // error that names the file.
    fuzz::require_names_file(error, path);
    return 0;
  }
  fuzz::fuzz_require(looks_like_checkpoint, "read_llama2c read a file is_llama2c_file refuses");
  for (const auto& [name, entry] : checkpoint.tensors.entries()) {
    fuzz::check_tensor_view(*checkpoint.file, name, entry.tensor.shape, entry.tensor.dtype,
                            entry.tensor.data, entry.tensor.num_bytes);
  }
  try {
    checkpoint.config.validate(path);
  } catch (const Error& error) {
    fuzz::require_names_file(error, path);
  }
  return 0;
}
