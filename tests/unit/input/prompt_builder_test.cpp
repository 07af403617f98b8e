#include "engine/input/prompt_builder.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/input/dataset_reader.h"
#include "engine/tokenizer/tokenizer_loader.h"
#include "tests/support/test_paths.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

class PromptBuilderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tokenizer_ = load_tokenizer_file(test::shared_path("models/stories260K/gguf/stories260K-f32.gguf"));
  }

  static DatasetRow row(const std::string& fields_json, size_t line = 7) {
    DatasetRow r;
    r.row_index = 6;
    r.line = line;
    r.fields = nlohmann::ordered_json::parse(fields_json);
    return r;
  }

  std::unique_ptr<Tokenizer> tokenizer_;
};

// llama-2-chat starts with {{ bos_token }}: the text carries "<s>", which parse_special turns
// into BOS, and the builder must not add another.
TEST_F(PromptBuilderTest, TemplateThatStartsWithBosGetsExactlyOne) {
  const std::string llama2 = test::read_file(test::shared_path("chat-templates/llama-2-chat/template.jinja"));
  const PromptBuilder builder(PromptOptions{.column_template = "{q}"}, llama2, *tokenizer_, DatasetFormat::Jsonl, {});
  const BuiltPrompt p = builder.build(row(R"({"q": "Once upon a time"})"));
  ASSERT_TRUE(p.text.starts_with("<s>")) << p.text;
  ASSERT_GE(p.token_ids.size(), 2u);
  EXPECT_EQ(p.token_ids[0], tokenizer_->bos_id());
  EXPECT_NE(p.token_ids[1], tokenizer_->bos_id());
  EXPECT_EQ(std::count(p.token_ids.begin(), p.token_ids.end(), tokenizer_->bos_id()), 1);
}

TEST_F(PromptBuilderTest, TemplateWithoutBosGetsTheModelsBos) {
  const std::string plain = test::read_file(test::shared_path("chat-templates/stories260K-plain/template.jinja"));
  FieldInfo prompt_field;
  prompt_field.name = "prompt";
  prompt_field.num_present = prompt_field.num_non_empty = prompt_field.num_strings = 1;
  // No column template given: the default for a "prompt" field is used.
  const PromptBuilder builder(PromptOptions{}, plain, *tokenizer_, DatasetFormat::Jsonl, {prompt_field});
  const BuiltPrompt p = builder.build(row(R"({"prompt": "Once upon a time"})"));
  EXPECT_EQ(p.text, "Once upon a time");
  EXPECT_EQ(p.token_ids, (std::vector<int32_t>{1, 403, 407, 261, 378}));  // expected/prompt.json
}

TEST_F(PromptBuilderTest, PlainCompletionJoinsSystemPromptAndText) {
  const PromptBuilder builder(
      PromptOptions{.column_template = "{instruction}[\n\n{input}]", .system_prompt = "Be kind.", .use_chat_template = false},
      "{{ 'never used' }}", *tokenizer_, DatasetFormat::Json, {});
  const BuiltPrompt p = builder.build(row(R"({"instruction": "Tell a story.", "input": ""})"));
  EXPECT_EQ(p.text, "Be kind.\n\nTell a story.");
  EXPECT_EQ(p.token_ids, tokenizer_->encode(p.text, EncodeOptions{.add_bos = true}));
  ASSERT_EQ(p.messages.size(), 2u);
  EXPECT_EQ(p.messages[0], (ChatMessage{"system", "Be kind."}));
}

TEST_F(PromptBuilderTest, ChatRowsKeepTheirConversationAndGainTheSystemPrompt) {
  const std::string chatml =
      test::read_file(test::shared_path("chat-templates/chatml-teknium-OpenHermes-2.5-Mistral-7B/template.jinja"));
  const PromptBuilder builder(PromptOptions{.system_prompt = "S"}, chatml, *tokenizer_, DatasetFormat::OpenAiChat, {});
  DatasetRow r = row(R"({})");
  r.messages = {{"user", "Hi"}, {"assistant", "Hello"}, {"user", "More"}};
  const BuiltPrompt p = builder.build(r);
  EXPECT_EQ(p.messages.front(), (ChatMessage{"system", "S"}));
  EXPECT_EQ(p.messages.size(), 4u);
  EXPECT_EQ(p.text,
            "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nHello<|im_end|>\n"
            "<|im_start|>user\nMore<|im_end|>\n<|im_start|>assistant\n");
}

TEST_F(PromptBuilderTest, MissingFieldIsARowErrorWithTheLine) {
  const PromptBuilder builder(PromptOptions{.column_template = "{instruction}"}, "", *tokenizer_, DatasetFormat::Jsonl, {});
  try {
    builder.build(row(R"({"prompt": "x"})", 42));
    FAIL();
  } catch (const DatasetRowError& e) {
    EXPECT_EQ(e.line, 42u);
    EXPECT_EQ(e.row_index, 6);
    EXPECT_THAT(e.what(), HasSubstr("instruction"));
  }
}

TEST_F(PromptBuilderTest, TemplateThatRaisesIsARowError) {
  const std::string gemma = test::read_file(test::shared_path("chat-templates/google-gemma-2-2b-it/template.jinja"));
  const PromptBuilder builder(PromptOptions{.column_template = "{q}", .system_prompt = "S"}, gemma, *tokenizer_,
                              DatasetFormat::Jsonl, {});
  try {
    builder.build(row(R"({"q": "x"})"));
    FAIL();
  } catch (const DatasetRowError& e) {
    EXPECT_THAT(e.what(), HasSubstr("System role not supported"));
  }
}

}  // namespace
}  // namespace sluice
