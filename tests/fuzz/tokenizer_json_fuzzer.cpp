// Feeds Hugging Face tokenizer.json files: the BPE model (vocab, merges, flags), added tokens,
// the normalizer and pre-tokenizer recognition, then encoding and decoding.
#include <cstddef>
#include <cstdint>

#include "engine/core/error.h"
#include "engine/tokenizer/hf_tokenizer_json.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/fuzz_input_file.h"
#include "tests/fuzz/tokenizer_exercise.h"

using namespace sluice;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = fuzz::write_input_file("tokenizer.json", data, size);
  std::unique_ptr<BpeTokenizer> tokenizer;
  try {
    tokenizer = load_hf_tokenizer_json(path, HfTokenizerConfig{});
  } catch (const Error& error) {
    fuzz::require_names_file(error, path);
    return 0;
  }
  fuzz::exercise_tokenizer(*tokenizer, path);
  return 0;
}
