// A thinking model's reasoning in the engine (SamplingParams::reasoning): the output split into
// reasoning and answer with its reasoning tokens counted, a budget that makes the engine write
// the closing tag itself, a grammar that starts when the reasoning ends, and a row's tokens the
// same alone or in a batch. The stories model never writes "</think>" by itself, so every
// reasoning here is closed by the budget (or runs to max_tokens).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "engine/grammar/grammar_source.h"
#include "engine/grammar/json_schema_grammar.h"
#include "engine/reasoning/reasoning_prompt.h"
#include "tests/unit/engine/engine_test_util.h"

namespace sluice::test {
namespace {

constexpr const char* kReasoningSchema = R"({
  "type":"object",
  "properties":{"name":{"type":"string","maxLength":8},"age":{"type":"integer","minimum":0}},
  "required":["name","age"],"additionalProperties":false})";

class ReasoningEngine : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    model_ = new StoriesModel();
    // Prompts that end inside a reasoning block, as the DeepSeek-R1 templates leave them.
    for (const auto& text : alpaca_prompts(6))
      prompts_.push_back(model_->encode(text + "<think>\n"));
  }
  static void TearDownTestSuite() {
    delete model_;
    model_ = nullptr;
  }
  static SamplingParams params(uint64_t seed, int budget, int max_tokens = 64) {
    SamplingParams p;
    p.temperature = 1.0f;
    p.seed = seed;
    p.max_tokens = max_tokens;
    p.reasoning = ReasoningParams{
        .format = ReasoningFormat::ThinkTags, .starts_in_reasoning = true, .budget = budget};
    return p;
  }
  static std::vector<int32_t> close_ids() {
    return model_->session.tokenizer->encode(
        reasoning_close_text(ReasoningFormat::ThinkTags),
        EncodeOptions{.add_bos = false, .parse_special = true});
  }
  static StoriesModel* model_;
  static std::vector<std::vector<int32_t>> prompts_;
};

StoriesModel* ReasoningEngine::model_ = nullptr;
std::vector<std::vector<int32_t>> ReasoningEngine::prompts_;

TEST_F(ReasoningEngine, ABudgetOf16GivesAtMost16ReasoningTokensThenTheClosingTag) {
  const std::vector<int32_t> close = close_ids();
  ASSERT_GT(close.size(), 1u);  // "</think>" is several pieces of this vocabulary
  int num_closed = 0;
  for (const uint64_t seed : {1, 2}) {
    auto engine = model_->make_engine(EngineConfig{.check_invariants = true});
    const auto out = run_all(*engine, prompts_, params(seed, 16));
    ASSERT_EQ(out.size(), prompts_.size());
    for (const auto& [key, f] : out) {
      SCOPED_TRACE(f.output_text);
      EXPECT_LE(f.num_reasoning_tokens, 16);
      const std::vector<int32_t>& ids = f.output_token_ids;
      if (f.finish_reason == FinishReason::Stop && ids.size() <= 16) continue;  // EOS first
      // Exactly 16 reasoning tokens, then the closing text the engine wrote, then the answer.
      EXPECT_EQ(f.num_reasoning_tokens, 16);
      ASSERT_GE(ids.size(), 16 + close.size());
      EXPECT_EQ(std::vector<int32_t>(ids.begin() + 16, ids.begin() + 16 + close.size()), close);
      EXPECT_FALSE(f.reasoning_text.empty());
      EXPECT_EQ(f.output_text.find("</think>"), std::string::npos);
      EXPECT_EQ(f.reasoning_text.find("</think>"), std::string::npos);
      // The raw output, decoded, is the reasoning, the tag and the answer.
      const std::string raw = model_->session.tokenizer->decode(ids);
      EXPECT_NE(raw.find("</think>"), std::string::npos) << raw;
      ++num_closed;
    }
  }
  EXPECT_GT(num_closed, 6);
}

TEST_F(ReasoningEngine, DeltasConcatenateToTheFinishedReasoningAndAnswer) {
  auto engine = model_->make_engine(EngineConfig{});
  std::map<RequestId, std::pair<std::string, std::string>> streamed;
  std::map<RequestId, FinishedRequest> finished;
  for (size_t i = 0; i < prompts_.size(); ++i) engine->add_request(prompts_[i], params(5, 12), i);
  while (engine->has_unfinished()) {
    StepResult step = engine->step();
    for (const TokenDelta& d : step.new_tokens) {
      streamed[d.request_id].first += d.reasoning_text;
      streamed[d.request_id].second += d.text;
    }
    for (auto& f : step.finished) finished[f.request_id] = std::move(f);
  }
  ASSERT_EQ(finished.size(), prompts_.size());
  for (const auto& [id, f] : finished) {
    EXPECT_EQ(streamed[id].first, f.reasoning_text);
    EXPECT_EQ(streamed[id].second, f.output_text);
  }
}

TEST_F(ReasoningEngine, TheGrammarStartsWhenTheReasoningEnds) {
  auto grammar =
      std::make_shared<const Grammar>(json_schema_grammar(kReasoningSchema, "schema.json"));
  SamplingParams p = params(3, 10, 120);
  p.grammar = std::make_shared<const GrammarSource>(GrammarSource{
      .kind = GrammarSourceKind::JsonSchema, .name = "schema.json", .text = kReasoningSchema});
  int num_valid = 0;
  auto engine = model_->make_engine(EngineConfig{.check_invariants = true});
  const auto out = run_all(*engine, prompts_, p, nullptr, grammar);
  for (const auto& [key, f] : out) {
    SCOPED_TRACE(f.output_text);
    ASSERT_TRUE(f.is_valid.has_value());
    EXPECT_EQ(f.num_reasoning_tokens, 10);
    EXPECT_FALSE(f.reasoning_text.empty());
    if (f.finish_reason != FinishReason::Stop) continue;
    // Free reasoning (not JSON), then an answer the schema accepts.
    EXPECT_TRUE(*f.is_valid);
    const auto answer = nlohmann::json::parse(f.output_text);
    EXPECT_TRUE(answer.at("name").is_string());
    EXPECT_TRUE(answer.at("age").is_number_integer());
    ++num_valid;
  }
  EXPECT_GT(num_valid, 2);
}

TEST_F(ReasoningEngine, ARowsTokensDoNotDependOnTheBatch) {
  auto together_engine = model_->make_engine(EngineConfig{});
  const auto together = run_all(*together_engine, prompts_, params(9, 8));
  for (size_t i = 0; i < prompts_.size(); ++i) {
    auto engine = model_->make_engine(EngineConfig{});
    RequestId id = engine->add_request(prompts_[i], params(9, 8), i);
    FinishedRequest alone;
    while (engine->has_unfinished()) {
      for (auto& f : engine->step().finished) {
        if (f.group_id == id) alone = std::move(f);
      }
    }
    const FinishedRequest& batched = together.at({i, 0});
    EXPECT_EQ(alone.output_token_ids, batched.output_token_ids) << i;
    EXPECT_EQ(alone.reasoning_text, batched.reasoning_text) << i;
    EXPECT_EQ(alone.output_text, batched.output_text) << i;
  }
}

}  // namespace
}  // namespace sluice::test
