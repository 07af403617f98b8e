// Constrained sampling in the engine: every finished row is a sentence of its grammar (or was
// cut off by max_tokens and says so), and a constrained row is bit-identical alone or in a batch.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "engine/grammar/choice_grammar.h"
#include "engine/grammar/grammar_matcher.h"
#include "engine/grammar/json_schema_grammar.h"
#include "engine/grammar/regex_grammar.h"
#include "tests/unit/engine/engine_test_util.h"

namespace sluice::test {
namespace {

constexpr const char* kSchema = R"({
  "type":"object",
  "properties":{
    "name":{"type":"string","maxLength":8},
    "age":{"type":"integer","minimum":0,"maximum":120},
    "mood":{"enum":["happy","sad"]},
    "tags":{"type":"array","items":{"type":"string","maxLength":4},"maxItems":2}
  },
  "required":["name","age","mood"]})";

class GrammarConstrained : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    model_ = new StoriesModel();
    for (const auto& text : alpaca_prompts(12)) prompts_.push_back(model_->encode(text));
  }
  static void TearDownTestSuite() {
    delete model_;
    model_ = nullptr;
  }
  static SamplingParams params(uint64_t seed, int max_tokens = 200) {
    SamplingParams p;
    p.temperature = 1.0f;
    p.seed = seed;
    p.max_tokens = max_tokens;
    return p;
  }
  static StoriesModel* model_;
  static std::vector<std::vector<int32_t>> prompts_;
};

StoriesModel* GrammarConstrained::model_ = nullptr;
std::vector<std::vector<int32_t>> GrammarConstrained::prompts_;

TEST_F(GrammarConstrained, EveryFinishedRowIsValidJsonForTheSchema) {
  auto grammar = std::make_shared<const Grammar>(json_schema_grammar(kSchema, "schema.json"));
  int num_valid = 0;
  for (uint64_t seed : {1, 2, 3}) {
    auto engine = model_->make_engine(EngineConfig{.check_invariants = true});
    auto out = run_all(*engine, prompts_, params(seed), nullptr, grammar);
    for (const auto& [key, f] : out) {
      ASSERT_TRUE(f.is_valid.has_value());
      if (f.finish_reason == FinishReason::Length) {
        EXPECT_FALSE(*f.is_valid) << f.output_text;
        continue;
      }
      ASSERT_EQ(f.finish_reason, FinishReason::Stop) << f.error;
      ASSERT_TRUE(*f.is_valid) << f.output_text;
      ++num_valid;
      auto json = nlohmann::json::parse(f.output_text);
      ASSERT_TRUE(json.is_object()) << f.output_text;
      EXPECT_TRUE(json["name"].is_string() && json["name"].get<std::string>().size() <= 8 * 4);
      EXPECT_TRUE(json["age"].is_number_integer() && json["age"].get<int>() >= 0 &&
                  json["age"].get<int>() <= 120)
          << f.output_text;
      EXPECT_TRUE(json["mood"] == "happy" || json["mood"] == "sad") << f.output_text;
    }
  }
  EXPECT_GE(num_valid, 18);  // most rows finish within 200 tokens
}

TEST_F(GrammarConstrained, RowCutOffInsideTheStructureIsMarkedInvalid) {
  auto grammar = std::make_shared<const Grammar>(json_schema_grammar(kSchema, "schema.json"));
  auto engine = model_->make_engine(EngineConfig{});
  auto out = run_all(*engine, {prompts_[0]}, params(1, /*max_tokens=*/3), nullptr, grammar);
  const FinishedRequest& f = out.at({0, 0});
  EXPECT_EQ(f.finish_reason, FinishReason::Length);
  ASSERT_TRUE(f.is_valid.has_value());
  EXPECT_FALSE(*f.is_valid);
  // Unconstrained rows carry no validity.
  auto free = run_all(*engine, {prompts_[0]}, params(1, 3));
  EXPECT_FALSE(free.at({0, 0}).is_valid.has_value());
}

TEST_F(GrammarConstrained, RegexAndChoiceRowsMatch) {
  auto regex =
      std::make_shared<const Grammar>(regex_grammar(" [A-Z][a-z]{2,6} (is|was) [0-9]{1,2}", "re"));
  auto choice =
      std::make_shared<const Grammar>(choice_grammar({" yes", " no", " maybe"}, "choice"));
  auto engine = model_->make_engine(EngineConfig{});
  for (uint64_t seed : {4, 5}) {
    for (const auto& [key, f] : run_all(*engine, prompts_, params(seed, 40), nullptr, regex)) {
      ASSERT_EQ(f.finish_reason, FinishReason::Stop) << f.output_text << f.error;
      EXPECT_TRUE(*f.is_valid);
      EXPECT_TRUE(grammar_accepts_text(*regex, f.output_text)) << f.output_text;
    }
    for (const auto& [key, f] : run_all(*engine, prompts_, params(seed, 40), nullptr, choice)) {
      ASSERT_EQ(f.finish_reason, FinishReason::Stop) << f.error;
      EXPECT_TRUE(f.output_text == " yes" || f.output_text == " no" || f.output_text == " maybe")
          << f.output_text;
    }
  }
}

TEST_F(GrammarConstrained, ConstrainedRowEqualsTheSameRowAlone) {
  auto grammar = std::make_shared<const Grammar>(json_schema_grammar(kSchema, "schema.json"));
  auto free_grammar = std::make_shared<const Grammar>(json_object_grammar());
  // A mixed batch: schema rows, free-JSON rows and unconstrained rows, with n = 2 forks.
  auto engine = model_->make_engine(EngineConfig{.max_num_seqs = 16, .check_invariants = true});
  std::map<RequestId, size_t> index_of;
  std::vector<SamplingParams> row_params;
  std::vector<std::shared_ptr<const Grammar>> row_grammars;
  for (size_t i = 0; i < prompts_.size(); ++i) {
    SamplingParams p = params(7, 60);
    p.n = i % 4 == 0 ? 2 : 1;
    row_params.push_back(p);
    row_grammars.push_back(i % 3 == 0 ? grammar : (i % 3 == 1 ? free_grammar : nullptr));
    index_of[engine->add_request(prompts_[i], p, i, row_grammars.back())] = i;
  }
  std::map<std::pair<size_t, uint32_t>, FinishedRequest> batch;
  while (engine->has_unfinished()) {
    for (auto& f : engine->step().finished) batch[{index_of.at(f.group_id), f.sample_idx}] = f;
  }
  for (size_t i = 0; i < prompts_.size(); ++i) {
    auto alone_engine = model_->make_engine(EngineConfig{});
    // The same RNG key as in the batch.
    alone_engine->add_request(prompts_[i], row_params[i], i, row_grammars[i]);
    int num_samples = 0;
    while (alone_engine->has_unfinished()) {
      for (const auto& f : alone_engine->step().finished) {
        ++num_samples;
        const FinishedRequest& b = batch.at({i, f.sample_idx});
        EXPECT_EQ(b.output_token_ids, f.output_token_ids) << "prompt " << i;
        EXPECT_EQ(b.finish_reason, f.finish_reason) << "prompt " << i;
        EXPECT_EQ(b.is_valid, f.is_valid) << "prompt " << i;
      }
    }
    EXPECT_EQ(num_samples, row_params[i].n);
  }
}

// The same on a tiny-arch model (another architecture, its GGUF vocabulary): every finished row
// parses and satisfies the schema's enum and bounds.
TEST(GrammarConstrainedTinyArch, FinishedRowsAreValidOnQwen3) {
  StoriesModel model("models/tiny-arch/qwen3/gguf/qwen3-F32.gguf");
  std::vector<std::vector<int32_t>> prompts;
  for (const auto& text : alpaca_prompts(8)) prompts.push_back(model.encode(text));
  auto grammar = std::make_shared<const Grammar>(json_schema_grammar(
      R"({"type":"object","properties":{"mood":{"enum":["happy","sad"]},
          "score":{"type":"integer","minimum":-5,"maximum":5}},"required":["mood","score"]})",
      "schema.json"));
  SamplingParams p;
  p.temperature = 1.0f;
  p.seed = 11;
  p.max_tokens = 120;
  auto engine = model.make_engine(EngineConfig{.check_invariants = true});
  int num_finished = 0;
  for (const auto& [key, f] : run_all(*engine, prompts, p, nullptr, grammar)) {
    ASSERT_TRUE(f.is_valid.has_value());
    EXPECT_EQ(*f.is_valid, f.finish_reason == FinishReason::Stop) << f.output_text;
    if (f.finish_reason != FinishReason::Stop) continue;
    ++num_finished;
    auto json = nlohmann::json::parse(f.output_text);
    EXPECT_TRUE(json["mood"] == "happy" || json["mood"] == "sad") << f.output_text;
    EXPECT_TRUE(json["score"].is_number_integer() && json["score"].get<int>() >= -5 &&
                json["score"].get<int>() <= 5)
        << f.output_text;
  }
  EXPECT_GE(num_finished, 4);
}

}  // namespace
}  // namespace sluice::test
