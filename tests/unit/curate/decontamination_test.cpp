// Decontamination against an evaluation set (engine/curate/decontamination.h): a planted 13-gram
// is found and a 12-gram is not; short evaluation texts match whole; the first overlap by
// position is reported; normalisation applies on both sides.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/core/error.h"
#include "engine/curate/decontamination.h"

namespace sluice {
namespace {

// count words "<prefix>0 <prefix>1 ..." starting at first.
std::string numbered_words(const std::string& prefix, int count, int first = 0) {
  std::string text;
  for (int i = 0; i < count; ++i) text += (i ? " " : "") + prefix + std::to_string(first + i);
  return text;
}

TEST(Decontamination, FindsAPlanted13GramAndNotA12Gram) {
  const std::vector<std::string> eval = {numbered_words("q", 30), numbered_words("e", 40)};
  const DecontaminationIndex index(eval);
  EXPECT_EQ(index.num_ngrams(), 18u + 28u);
  // Words e5..e17 (13 of them) inside unrelated text, in another case and punctuation.
  const std::string planted = "Intro words here. " + numbered_words("E", 13, 5) + "! And more.";
  const auto match = index.find(planted);
  ASSERT_TRUE(match.has_value());
  EXPECT_EQ(match->eval_index, 1u);
  EXPECT_EQ(match->ngram, numbered_words("e", 13, 5));
  // 12 words only.
  EXPECT_FALSE(index.find("Intro " + numbered_words("e", 12, 5) + " outro").has_value());
  // 13 words, but not consecutive in the evaluation text.
  EXPECT_FALSE(index.find(numbered_words("e", 6, 0) + " " + numbered_words("e", 7, 7)).has_value());
  EXPECT_FALSE(index.find("").has_value());
}

TEST(Decontamination, ReportsTheFirstOverlapInTheText) {
  const std::vector<std::string> eval = {numbered_words("a", 13), numbered_words("b", 13)};
  const DecontaminationIndex index(eval);
  const auto match = index.find(numbered_words("b", 13) + " x " + numbered_words("a", 13));
  ASSERT_TRUE(match.has_value());
  EXPECT_EQ(match->eval_index, 1u);
}

TEST(Decontamination, ShortEvaluationTextsMatchWholeAndTinyOnesAreSkipped) {
  const std::vector<std::string> eval = {"What is the capital city of France today?",  // 8 words
                                         "Name a colour.",                             // 3 words
                                         numbered_words("z", 20)};
  const DecontaminationIndex index(eval);
  EXPECT_EQ(index.num_skipped_eval_texts(), 1u);
  const auto match = index.find("Question: what is the capital city of France today? Paris.");
  ASSERT_TRUE(match.has_value());
  EXPECT_EQ(match->eval_index, 0u);
  EXPECT_EQ(match->ngram, "what is the capital city of france today");
  // 7 of its 8 words are not enough.
  EXPECT_FALSE(index.find("what is the capital city of France").has_value());
  EXPECT_FALSE(index.find("Name a colour.").has_value());
}

TEST(Decontamination, TypographicPunctuationDoesNotHideAnOverlap) {
  // The evaluation set writes "don’t" and an em dash; the generated text "don't" and " - ".
  const DecontaminationIndex index(
      {"I don\xE2\x80\x99t think the answer \xE2\x80\x94 whatever it is \xE2\x80\x94 "
       "matters much to anyone here at all"});
  const auto match =
      index.find("Well, I don't think the answer - whatever it is - matters much to anyone here!");
  ASSERT_TRUE(match.has_value());
  EXPECT_EQ(match->ngram, "i dont think the answer whatever it is matters much to anyone here");
}

TEST(Decontamination, NgramLengthIsConfigurable) {
  DecontaminationOptions options;
  options.ngram_words = 5;
  options.min_eval_words = 5;
  const DecontaminationIndex index({"one two three four five six"}, options);
  EXPECT_TRUE(index.find("zero two three four five six seven").has_value());
  EXPECT_FALSE(index.find("one two three four six").has_value());
  options.min_eval_words = 6;
  EXPECT_THROW(DecontaminationIndex({"x"}, options), Error);
  options.ngram_words = 0;
  EXPECT_THROW(DecontaminationIndex({"x"}, options), Error);
}

}  // namespace
}  // namespace sluice
