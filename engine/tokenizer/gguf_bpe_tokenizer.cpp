#include "engine/tokenizer/gguf_bpe_tokenizer.h"

#include "engine/core/error.h"

namespace sluice {

std::unique_ptr<BpeTokenizer> make_gguf_bpe_tokenizer(GgufVocab vocab) {
  const auto pre_tokenizer = pre_tokenizer_from_gguf_name(vocab.pre);
  if (!pre_tokenizer) {
    fail(vocab.path, ": metadata tokenizer.ggml.pre is '", vocab.pre,
         "', a pre-tokenizer Sluice does not implement (it knows GPT-2, Llama 3, Qwen2 and the "
         "digit-splitting GPT-2 variants)");
  }
  if (vocab.merges.empty())
    fail(vocab.path, ": metadata tokenizer.ggml.merges is missing or empty");

  const bool is_llama3 = *pre_tokenizer == PreTokenizer::Llama3;
  BpeVocab bpe;
  bpe.source = vocab.path;
  bpe.tokens = std::move(vocab.tokens);
  bpe.kinds = std::move(vocab.kinds);
  bpe.merges = std::move(vocab.merges);
  bpe.pre_tokenizer = *pre_tokenizer;
  bpe.ignore_merges = is_llama3;  // Llama 3's tokenizer.json sets ignore_merges
  bpe.bos_id = vocab.bos_id;
  bpe.eos_id = vocab.eos_id;
  bpe.add_bos = vocab.add_bos.value_or(is_llama3);
  bpe.add_eos = vocab.add_eos.value_or(false);
  bpe.extra_stop_ids = std::move(vocab.extra_stop_ids);
  return std::make_unique<BpeTokenizer>(std::move(bpe));
}

}  // namespace sluice
