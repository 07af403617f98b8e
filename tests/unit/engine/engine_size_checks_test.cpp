// The engine checks sizes against the machine before it allocates: a KV pool larger than the
// available host memory is refused naming the option that sized it, and a prompt whose bytes
// cannot fit the context is refused without being tokenized.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/input/prompt_builder.h"
#include "tests/support/memory_limit.h"
#include "tests/unit/engine/engine_test_util.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

TEST(EngineSizeChecks, KvCacheLargerThanTheMachineIsRefusedNamingTheOption) {
  const test::StoriesModel stories;
  // A pebibyte of KV cache, and a billion blocks: both far past any machine's memory.
  test::expect_error_within_memory_limit(
      [&] { stories.make_engine(EngineConfig{.kv_cache_bytes = size_t{1} << 50}); },
      {"--kv-cache-bytes 1125899906842624", "available"});
  test::expect_error_within_memory_limit(
      [&] { stories.make_engine(EngineConfig{.num_kv_blocks = 1 << 30}); },
      {"--kv-blocks 1073741824", "available"});
}

TEST(EngineSizeChecks, KvCacheThatFitsIsAllocated) {
  const test::StoriesModel stories;
  EXPECT_EQ(stories.make_engine(EngineConfig{.num_kv_blocks = 64})->num_kv_blocks(), 64);
}

// A step's token budget left open is the backend's: 512 on the CPU (its fp32 activations for
// 2048 tokens would cost more memory than the larger step saves time); a budget given is kept.
TEST(EngineSizeChecks, StepTokenBudgetLeftOpenIsTheBackends) {
  const test::StoriesModel stories;
  const auto open = stories.make_engine(EngineConfig{.num_kv_blocks = 64});
  EXPECT_EQ(open->config().max_num_batched_tokens, 512);
  EXPECT_EQ(open->backend().default_max_num_batched_tokens(), 512);
  const auto given =
      stories.make_engine(EngineConfig{.num_kv_blocks = 64, .max_num_batched_tokens = 2048});
  EXPECT_EQ(given->config().max_num_batched_tokens, 2048);
}

// A row whose one field is `text`.
DatasetRow prompt_row(std::string text) {
  DatasetRow row;
  row.row_index = 0;
  row.line = 1;
  row.fields = nlohmann::ordered_json::object();
  row.fields["prompt"] = std::move(text);
  return row;
}

TEST(EngineSizeChecks, PromptThatCannotFitTheContextIsRefusedUntokenized) {
  for (const char* model : {"models/stories260K/gguf/stories260K-f32.gguf", "models/stories260K/hf",
                            "models/stories260K/llama2c/stories260K.bin"}) {
    SCOPED_TRACE(model);
    const test::StoriesModel stories(model);
    PromptBuilder builder(PromptOptions{.column_template = "{prompt}"}, "",
                          *stories.session.tokenizer, DatasetFormat::Jsonl, {});
    builder.set_max_model_len(512);
    // 20 MB of text: tokenizing it would take gigabytes; holding it takes a few copies.
    std::string text;
    while (text.size() < (size_t{20} << 20)) text += "Once upon a time there was a girl. ";
    const DatasetRow row = prompt_row(std::move(text));
    const test::LimitedRun run = test::run_with_memory_limit(
        [&] {
          const BuiltPrompt prompt = builder.build(row);
          if (prompt.token_ids.empty() && !prompt.refusal.empty()) throw Error(prompt.refusal);
        },
        size_t{256} << 20);
    ASSERT_TRUE(run.threw_error) << run.outcome;
    EXPECT_THAT(run.outcome, HasSubstr("max_model_len is 512"));
    EXPECT_THAT(run.outcome, HasSubstr("refused without tokenizing"));
    EXPECT_THROW(builder.encode(row.fields["prompt"].get<std::string>()), Error);

    // A prompt that may fit is encoded as before.
    const BuiltPrompt fits = builder.build(prompt_row("Once upon a time"));
    EXPECT_TRUE(fits.refusal.empty());
    EXPECT_EQ(fits.token_ids, stories.encode("Once upon a time"));
  }
}

}  // namespace
}  // namespace sluice
