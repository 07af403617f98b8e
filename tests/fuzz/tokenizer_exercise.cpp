#include "tests/fuzz/tokenizer_exercise.h"

#include <algorithm>
#include <exception>
#include <string>
#include <vector>

#include "engine/core/error.h"
#include "tests/fuzz/fuzz_check.h"

namespace sluice::fuzz {
namespace {

// Enough ids to reach byte pieces and merges in real vocabularies, few enough to stay fast.
constexpr int32_t kMaxIdsVisited = 600;

void encode_and_decode(const Tokenizer& tokenizer, const std::string& path,
                       const std::string& text) {
  for (const bool parse_special : {false, true}) {
    const EncodeOptions options{.add_bos = true, .add_eos = true, .parse_special = parse_special};
    std::vector<int32_t> ids;
    try {
      ids = tokenizer.encode(text, options);
    } catch (const Error& error) {
      // A model that loads can still be inconsistent for some text (libsentencepiece's own
      // checks, "all normalized characters are not consumed"): a clear error naming the file is
      // the right answer there; a crash or any other exception is not.
      require_names_file(error, path);
      continue;
    } catch (const std::exception& error) {
      fuzz_fail(str_cat("encode threw (", tokenizer.describe(), "): ", error.what()));
    }
    for (const int32_t id : ids) {
      fuzz_require(id >= 0 && id < tokenizer.vocab_size(),
                   str_cat("encode returned id ", id, " outside the vocabulary of ",
                           tokenizer.vocab_size(), " (", tokenizer.describe(), ")"));
    }
    (void)tokenizer.decode(ids);
  }
}

}  // namespace

void exercise_tokenizer(const Tokenizer& tokenizer, const std::string& path) {
  const int32_t vocab_size = tokenizer.vocab_size();
  fuzz_require(vocab_size > 0, "a loaded tokenizer has no tokens");
  for (const int32_t id : {tokenizer.bos_id(), tokenizer.eos_id()}) {
    fuzz_require(id >= -1 && id < vocab_size,
                 str_cat("special id ", id, " outside the vocabulary"));
  }
  std::string own_pieces;
  const int32_t num_visited = std::min(vocab_size, kMaxIdsVisited);
  for (int32_t id = 0; id < num_visited; ++id) {
    own_pieces += tokenizer.token_text(id);
    (void)tokenizer.token_to_bytes(id, true);
    (void)tokenizer.token_to_bytes(id, false);
    (void)tokenizer.token_kind(id);
  }
  for (const int32_t id : {-1, vocab_size, vocab_size + 1000}) {
    (void)tokenizer.token_to_bytes(id, false);
    (void)tokenizer.token_text(id);
  }
  for (const std::string& text :
       {std::string("Once upon a time, there was a little girl named Lily."),
        std::string("  leading spaces\tand\ttabs\r\nand lines\n\n"),
        std::string("h\xC3\xA9llo w\xC3\xB6rld \xE4\xBD\xA0\xE5\xA5\xBD \xF0\x9F\x99\x82"),
        std::string("bad \xFF\xFE utf-8 \xC3 \xE4\xBD cut"), std::string("\0nul\0", 5),
        std::string("<s>hi</s><unk><|im_start|>user\n<|endoftext|><|eot_id|>"), std::string(),
        own_pieces}) {
    encode_and_decode(tokenizer, path, text);
  }
}

}  // namespace sluice::fuzz
