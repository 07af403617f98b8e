// The output processor's reasoning split (engine/runner/output_processor.h) over a vocabulary
// whose reasoning tags are special tokens, as gpt-oss's and Gemma 4's are: the tags keep their
// text for the split (a detokenizer drops special tokens), gpt-oss's <|end|> ends the analysis
// message instead of the output, reasoning tokens are counted inside the block only, and a
// request without a format is untouched (its <|end|> still stops it).
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "engine/runner/output_processor.h"

namespace sluice {
namespace {

// Bytes are ids 0..255; the special tokens follow.
class TagTokenizer final : public Tokenizer {
 public:
  static constexpr int32_t kFirstSpecial = 256;
  static const std::vector<std::string>& specials() {
    static const std::vector<std::string> tags = {"<|start|>", "<|channel|>", "<|message|>",
                                                  "<|end|>",   "<|return|>",  "<|channel>",
                                                  "<channel|>"};
    return tags;
  }
  static int32_t id_of(std::string_view tag) {
    for (size_t i = 0; i < specials().size(); ++i) {
      if (specials()[i] == tag) return kFirstSpecial + static_cast<int32_t>(i);
    }
    return -1;
  }

  std::vector<int32_t> encode(std::string_view text, const EncodeOptions& options) const override {
    std::vector<int32_t> ids;
    size_t i = 0;
    while (i < text.size()) {
      bool matched = false;
      for (const std::string& tag : specials()) {
        if (options.parse_special && text.substr(i).starts_with(tag)) {
          ids.push_back(id_of(tag));
          i += tag.size();
          matched = true;
          break;
        }
      }
      if (!matched) ids.push_back(static_cast<unsigned char>(text[i++]));
    }
    return ids;
  }
  std::string token_to_bytes(int32_t id, bool) const override {
    return id >= 0 && id < kFirstSpecial ? std::string(1, static_cast<char>(id)) : std::string();
  }
  std::string token_text(int32_t id) const override {
    return id >= kFirstSpecial ? specials()[static_cast<size_t>(id - kFirstSpecial)]
                               : token_to_bytes(id, false);
  }
  TokenKind token_kind(int32_t id) const override {
    return id >= kFirstSpecial ? TokenKind::Control : TokenKind::Normal;
  }
  int32_t vocab_size() const override {
    return kFirstSpecial + static_cast<int32_t>(specials().size());
  }
  int32_t bos_id() const override { return -1; }
  int32_t eos_id() const override { return id_of("<|return|>"); }
  bool add_bos_default() const override { return false; }
  std::string describe() const override { return "tags"; }
};

struct Processed {
  std::string streamed_reasoning, streamed_answer;
  FinishedOutput finished;
  bool stopped = false;
  size_t num_fed = 0;
};

Processed process(const TagTokenizer& tokenizer, const ReasoningParams& reasoning,
                  std::string_view output) {
  // The engine's stop ids for gpt-oss: EOS and the end-of-turn markers, <|end|> among them.
  OutputProcessor processor(tokenizer, {tokenizer.eos_id(), TagTokenizer::id_of("<|end|>")});
  SamplingParams params;
  params.reasoning = reasoning;
  processor.add(1, params, false);
  Processed p;
  for (const int32_t id : tokenizer.encode(output, EncodeOptions{.parse_special = true})) {
    const TokenOutcome outcome = processor.on_token(1, id);
    ++p.num_fed;
    p.streamed_reasoning += outcome.new_reasoning;
    p.streamed_answer += outcome.new_text;
    if (outcome.is_stopped) {
      p.stopped = true;
      break;
    }
  }
  p.finished = processor.finish(1);
  p.streamed_reasoning += p.finished.reasoning_rest;
  p.streamed_answer += p.finished.answer_rest;
  return p;
}

constexpr std::string_view kHarmonyOutput =
    "<|channel|>analysis<|message|>Let me think.<|end|><|start|>assistant<|channel|>final"
    "<|message|>Hi there!<|return|>";

TEST(OutputProcessorReasoning, HarmonyTagsThatAreSpecialTokensSplitTheOutput) {
  const TagTokenizer tokenizer;
  const Processed p = process(tokenizer, {.format = ReasoningFormat::Harmony}, kHarmonyOutput);
  EXPECT_TRUE(p.stopped);  // at <|return|>, not at <|end|>
  EXPECT_EQ(p.finished.reasoning, "Let me think.");
  EXPECT_EQ(p.finished.answer, "Hi there!");
  EXPECT_EQ(p.streamed_reasoning, p.finished.reasoning);
  EXPECT_EQ(p.streamed_answer, p.finished.answer);
  EXPECT_EQ(p.finished.num_reasoning_tokens, 13);  // the 13 bytes of "Let me think."
}

TEST(OutputProcessorReasoning, WithoutAFormatTheEndMarkerStopsAndSpecialsAreDropped) {
  const TagTokenizer tokenizer;
  const Processed p = process(tokenizer, {}, kHarmonyOutput);
  EXPECT_TRUE(p.stopped);
  EXPECT_EQ(p.finished.answer, "analysisLet me think.");  // stopped at <|end|>, tags dropped
  EXPECT_EQ(p.finished.reasoning, "");
  EXPECT_EQ(p.finished.num_reasoning_tokens, 0);
}

TEST(OutputProcessorReasoning, GemmaThoughtChannelTagsAreKept) {
  const TagTokenizer tokenizer;
  const Processed p = process(tokenizer, {.format = ReasoningFormat::ThoughtChannel},
                              "<|channel>thought\nPlanning.<channel|>The answer.");
  EXPECT_FALSE(p.stopped);
  EXPECT_EQ(p.finished.reasoning, "Planning.");
  EXPECT_EQ(p.finished.answer, "The answer.");
  EXPECT_EQ(p.streamed_answer, "The answer.");
}

TEST(OutputProcessorReasoning, AnUnclosedBlockIsAllReasoning) {
  const TagTokenizer tokenizer;
  const Processed p =
      process(tokenizer, {.format = ReasoningFormat::ThinkTags, .starts_in_reasoning = true},
              "Still thinking when cut off </thi");
  EXPECT_EQ(p.finished.reasoning, "Still thinking when cut off </thi");
  EXPECT_EQ(p.finished.answer, "");
  EXPECT_EQ(p.streamed_reasoning, p.finished.reasoning);
}

TEST(OutputProcessorReasoning, ThePhaseFollowsTheTags) {
  const TagTokenizer tokenizer;
  OutputProcessor processor(tokenizer, {tokenizer.eos_id()});
  SamplingParams params;
  params.reasoning = {.format = ReasoningFormat::ThinkTags, .starts_in_reasoning = true};
  processor.add(7, params, false);
  EXPECT_TRUE(processor.reasoning_phase(7).in_reasoning);
  for (const char c : std::string_view("abc</think")) processor.on_token(7, c);
  EXPECT_TRUE(processor.reasoning_phase(7).in_reasoning);
  EXPECT_EQ(processor.reasoning_phase(7).num_reasoning_tokens, 10);
  processor.on_token(7, '>');
  EXPECT_FALSE(processor.reasoning_phase(7).in_reasoning);
  EXPECT_TRUE(processor.reasoning_phase(7).in_answer);
  EXPECT_TRUE(processor.reasoning_phase(7).answer_began);
  processor.on_token(7, 'x', /*is_forced=*/false);
  EXPECT_FALSE(processor.reasoning_phase(7).answer_began);
  const FinishedOutput out = processor.finish(7);
  EXPECT_EQ(out.reasoning, "abc");
  EXPECT_EQ(out.answer, "x");
  EXPECT_EQ(out.num_reasoning_tokens, 10);
}

}  // namespace
}  // namespace sluice
