// Reasoning kept apart from the answer (engine/reasoning/reasoning_parser.h): canned outputs of
// each family split whole and streamed cut at every byte (the deltas concatenated give the whole
// split), tags cut across chunks, unclosed blocks, text that only looks like a tag; the format
// read from the real chat templates of ../shared/chat-templates and, from their transformers
// renders, whether the generation prompt already opened the block.
#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

#include "engine/reasoning/reasoning_parser.h"
#include "tests/support/test_paths.h"

namespace sluice {
namespace {

struct Canned {
  const char* name;
  ReasoningFormat format;
  bool starts_in_reasoning;
  std::string output;
  std::string reasoning;
  std::string answer;
};

void PrintTo(const Canned& c, std::ostream* os) {
  *os << c.name;
}

const std::vector<Canned>& canned_outputs() {
  static const std::vector<Canned> cases = {
      {"qwen3", ReasoningFormat::ThinkTags, false,
       "<think>\nThe user greets me.\nI should answer.\n</think>\n\nHello! I am Qwen.",
       "The user greets me.\nI should answer.", "Hello! I am Qwen."},
      {"qwen3_no_thinking", ReasoningFormat::ThinkTags, false, "Hello! I am Qwen.", "",
       "Hello! I am Qwen."},
      {"answer_with_leading_space", ReasoningFormat::ThinkTags, false, "  Hi <b>there</b>", "",
       "  Hi <b>there</b>"},
      {"r1_opened_by_the_prompt", ReasoningFormat::ThinkTags, true,
       "Okay, 2 + 2.\nThat is 4.\n</think>\n\n**4**", "Okay, 2 + 2.\nThat is 4.", "**4**"},
      {"unclosed_block", ReasoningFormat::ThinkTags, false, "<think>\nStill thinking about it  ",
       "Still thinking about it", ""},
      {"r1_unclosed", ReasoningFormat::ThinkTags, true, "Hmm, let me see", "Hmm, let me see", ""},
      {"tag_lookalike", ReasoningFormat::ThinkTags, false, "<thinking>no</thinking> yes", "",
       "<thinking>no</thinking> yes"},
      {"opening_tag_cut_short", ReasoningFormat::ThinkTags, false, "\n<thi", "", "\n<thi"},
      {"closing_lookalike_inside", ReasoningFormat::ThinkTags, false, "<think>a </thin b</think>c",
       "a </thin b", "c"},
      {"utf8", ReasoningFormat::ThinkTags, false, "<think>Думаю… 🤔</think>Ответ: 4",
       "Думаю… 🤔", "Ответ: 4"},
      {"empty_block", ReasoningFormat::ThinkTags, false, "<think>\n\n</think>\n\nJust the answer.",
       "", "Just the answer."},
      {"gemma4", ReasoningFormat::ThoughtChannel, false,
       "<|channel>thought\nPlan the reply.<channel|>Hello from Gemma.", "Plan the reply.",
       "Hello from Gemma."},
      {"harmony", ReasoningFormat::Harmony, false,
       "<|channel|>analysis<|message|>User asks 2+2. Simple.<|end|><|start|>assistant"
       "<|channel|>final<|message|>2 + 2 = 4.<|return|>",
       "User asks 2+2. Simple.", "2 + 2 = 4."},
      {"harmony_final_only", ReasoningFormat::Harmony, false,
       "<|channel|>final<|message|>Hi!<|return|>", "", "Hi!"},
      {"harmony_unclosed_analysis", ReasoningFormat::Harmony, false,
       "<|channel|>analysis<|message|>We need to think", "We need to think", ""},
      {"harmony_tool_call", ReasoningFormat::Harmony, false,
       "<|channel|>analysis<|message|>Need weather.<|end|><|start|>assistant<|channel|>commentary "
       "to=functions.get_weather <|constrain|>json<|message|>{\"city\":\"Paris\"}<|call|>",
       "Need weather.", "{\"city\":\"Paris\"}"},
      {"harmony_two_analyses", ReasoningFormat::Harmony, false,
       "<|channel|>analysis<|message|>First.<|end|><|start|>assistant<|channel|>analysis"
       "<|message|>Second.<|end|><|start|>assistant<|channel|>final<|message|>Done.",
       "First.\nSecond.", "Done."},
      {"harmony_without_headers", ReasoningFormat::Harmony, false, "Plain text, no channels.", "",
       "Plain text, no channels."},
      // Found by the fuzzer: text before a header is the answer, and the header after it is
      // only text of the answer, not the start of a message.
      {"harmony_text_before_a_header", ReasoningFormat::Harmony, false,
       " 4.\n**4**<|message|>x<|end|><|start|>assistant<|channel|>final<|message|>4<|return|>", "",
       " 4.\n**4**<|message|>x\n4"},
      // Found by the fuzzer (it looped): a header with no "<|message|>" in its first 256 bytes is
      // text of the answer.
      {"harmony_header_without_a_message", ReasoningFormat::Harmony, false,
       "<|channel|>analysis" + std::string(300, 'x') + "<|end|>", "",
       "<|channel|>analysis" + std::string(300, 'x')},
      // Found by the fuzzer: a header's tag after text is a stop wherever a chunk began.
      {"harmony_header_after_text", ReasoningFormat::Harmony, false,
       "a<|ch.<|channel|>analysis<|message|>b", "b", "a<|ch."},
      {"harmony_opened_by_the_prompt", ReasoningFormat::Harmony, true,
       "Thinking.<|end|><|start|>assistant<|channel|>final<|message|>Answer.", "Thinking.",
       "Answer."},
      {"none", ReasoningFormat::None, false, "<think>kept</think> as is", "",
       "<think>kept</think> as is"},
  };
  return cases;
}

class CannedOutputs : public ::testing::TestWithParam<Canned> {};

TEST_P(CannedOutputs, SplitWholeAndStreamedAtEveryCut) {
  const Canned& c = GetParam();
  const ReasoningSplit whole = split_reasoning(c.format, c.starts_in_reasoning, c.output);
  EXPECT_EQ(whole.reasoning, c.reasoning);
  EXPECT_EQ(whole.answer, c.answer);
  // Two chunks cut at every byte, and one byte at a time.
  for (size_t cut = 0; cut <= c.output.size(); ++cut) {
    ReasoningStream stream(c.format, c.starts_in_reasoning);
    ReasoningSplit sum = stream.feed(std::string_view(c.output).substr(0, cut));
    const ReasoningSplit second = stream.feed(std::string_view(c.output).substr(cut));
    const ReasoningSplit last = stream.finish();
    sum.reasoning += second.reasoning + last.reasoning;
    sum.answer += second.answer + last.answer;
    EXPECT_EQ(sum.reasoning, c.reasoning) << "cut at " << cut;
    EXPECT_EQ(sum.answer, c.answer) << "cut at " << cut;
  }
  ReasoningStream stream(c.format, c.starts_in_reasoning);
  std::string reasoning, answer;
  for (const char ch : c.output) {
    const ReasoningSplit d = stream.feed(std::string_view(&ch, 1));
    reasoning += d.reasoning;
    answer += d.answer;
  }
  const ReasoningSplit last = stream.finish();
  EXPECT_EQ(reasoning + last.reasoning, c.reasoning) << "byte by byte";
  EXPECT_EQ(answer + last.answer, c.answer) << "byte by byte";
}

INSTANTIATE_TEST_SUITE_P(Families, CannedOutputs, ::testing::ValuesIn(canned_outputs()),
                         [](const auto& param_info) { return std::string(param_info.param.name); });

// A tag cut across chunks is held, not shown as answer or reasoning text, until it completes.
TEST(ReasoningStream, HoldsATagCutAcrossChunks) {
  ReasoningStream stream(ReasoningFormat::ThinkTags, false);
  ReasoningSplit d = stream.feed("<thi");
  EXPECT_EQ(d.reasoning + d.answer, "");
  d = stream.feed("nk>Plan");
  EXPECT_EQ(d.reasoning, "Plan");
  d = stream.feed("ned.</th");
  EXPECT_EQ(d.reasoning, "ned.");
  EXPECT_EQ(d.answer, "");
  d = stream.feed("ink>\n\nAnswer");
  EXPECT_EQ(d.reasoning, "");
  EXPECT_EQ(d.answer, "Answer");
}

TEST(ReasoningFormats, NamesRoundTrip) {
  for (const ReasoningFormat f : {ReasoningFormat::None, ReasoningFormat::ThinkTags,
                                  ReasoningFormat::ThoughtChannel, ReasoningFormat::Harmony}) {
    EXPECT_EQ(parse_reasoning_format(reasoning_format_name(f)), f);
  }
  EXPECT_FALSE(parse_reasoning_format("deepseek").has_value());
}

std::string chat_template(const std::string& model) {
  return test::read_file(test::shared_path("chat-templates/" + model + "/template.jinja"));
}

std::string rendered(const std::string& model, const std::string& case_name) {
  return test::read_file(
      test::shared_path("chat-templates/" + model + "/expected/" + case_name + ".txt"));
}

TEST(ReasoningFormats, ReadFromTheRealChatTemplates) {
  EXPECT_EQ(detect_reasoning_format(chat_template("Qwen-Qwen3-0.6B")), ReasoningFormat::ThinkTags);
  EXPECT_EQ(detect_reasoning_format(chat_template("Qwen3.5-4B")), ReasoningFormat::ThinkTags);
  EXPECT_EQ(detect_reasoning_format(chat_template("deepseek-ai-DeepSeek-R1-Distill-Qwen-32B")),
            ReasoningFormat::ThinkTags);
  EXPECT_EQ(detect_reasoning_format(chat_template("openai-gpt-oss-120b")),
            ReasoningFormat::Harmony);
  EXPECT_EQ(detect_reasoning_format(chat_template("google-gemma-4-31B-it")),
            ReasoningFormat::ThoughtChannel);
  EXPECT_EQ(detect_reasoning_format(chat_template("meta-llama-Llama-3.1-8B-Instruct")),
            ReasoningFormat::None);
  EXPECT_EQ(detect_reasoning_format(chat_template("Qwen-Qwen2.5-7B-Instruct")),
            ReasoningFormat::None);
}

// transformers' renders with the generation prompt: R1 and Qwen3.5 open the block themselves
// (the output starts inside it), Qwen3 leaves it to the model, and thinking switched off closes
// an empty block in the prompt (Qwen3, Qwen3.5, Gemma 4).
TEST(ReasoningFormats, GenerationPromptsThatOpenTheBlock) {
  const auto opens = [](const std::string& model, const std::string& case_name) {
    return prompt_opens_reasoning(detect_reasoning_format(chat_template(model)),
                                  rendered(model, case_name));
  };
  EXPECT_TRUE(opens("deepseek-ai-DeepSeek-R1-Distill-Qwen-32B", "thinking_on"));
  EXPECT_TRUE(opens("Qwen3.5-4B", "thinking_on"));
  EXPECT_FALSE(opens("Qwen-Qwen3-0.6B", "thinking_on"));
  EXPECT_FALSE(opens("Qwen-Qwen3-0.6B", "thinking_off"));
  EXPECT_FALSE(opens("Qwen3.5-4B", "thinking_off"));
  EXPECT_FALSE(opens("google-gemma-4-31B-it", "thinking_on"));
  EXPECT_FALSE(opens("google-gemma-4-31B-it", "thinking_off"));
  EXPECT_FALSE(opens("openai-gpt-oss-120b", "single_user"));
  // The Qwen3 render with an earlier turn's reasoning: the history's blocks are closed.
  EXPECT_FALSE(opens("Qwen-Qwen3-0.6B", "reasoning_history"));
  EXPECT_FALSE(prompt_opens_reasoning(ReasoningFormat::None, "<think>"));
}

}  // namespace
}  // namespace sluice
