// Feeds SentencePiece .model files (tokenizer.model): the format check by content, the
// protobuf framing walk, libsentencepiece's own loading, then encoding and decoding.
#include <cstddef>
#include <cstdint>

#include "engine/core/error.h"
#include "engine/tokenizer/sentencepiece_tokenizer.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/fuzz_input_file.h"
#include "tests/fuzz/tokenizer_exercise.h"

using namespace sluice;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)SentencePieceTokenizer::looks_like_sentencepiece_model({data, size});
  const std::string path = fuzz::write_input_file("tokenizer.model", data, size);
  std::unique_ptr<SentencePieceTokenizer> tokenizer;
  try {
    tokenizer = SentencePieceTokenizer::load(path);
  } catch (const Error& error) {
    fuzz::require_names_file(error, path);
    return 0;
  }
  fuzz::exercise_tokenizer(*tokenizer, path);
  return 0;
}
