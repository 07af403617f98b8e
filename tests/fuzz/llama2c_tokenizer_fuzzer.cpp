// Feeds llama2.c tokenizer.bin files: the format check by content, the record walk (score,
// length, bytes), then encoding (run.c's merges) and decoding.
#include <cstddef>
#include <cstdint>

#include "engine/core/error.h"
#include "engine/tokenizer/llama2c_tokenizer.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/tokenizer_exercise.h"

using namespace sluice;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = "tok.bin";  // parse() reads bytes; the name only appears in errors
  (void)Llama2cTokenizer::looks_like_llama2c_tokenizer({data, size});
  std::unique_ptr<Llama2cTokenizer> tokenizer;
  try {
    tokenizer = Llama2cTokenizer::parse({data, size}, path);
  } catch (const Error& error) {
    fuzz::require_names_file(error, path);
    return 0;
  }
  fuzz::exercise_tokenizer(*tokenizer, path);
  return 0;
}
