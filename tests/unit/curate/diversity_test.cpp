// distinct-n (engine/curate/diversity.h) on cases counted by hand.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/core/error.h"
#include "engine/curate/diversity.h"

namespace sluice {
namespace {

TEST(Diversity, DistinctNOnAHandCountedCase) {
  // Words: "the cat sat" + "The cat, ran!" -> the cat sat | the cat ran.
  // Unigrams: 6 in all, distinct {the, cat, sat, ran} = 4 -> 4/6.
  // Bigrams: (the cat)(cat sat) | (the cat)(cat ran) = 4, distinct 3 -> 3/4.
  // Trigrams: 2, distinct 2 -> 1.
  const std::vector<std::string> texts = {"the cat sat", "The cat, ran!"};
  EXPECT_DOUBLE_EQ(distinct_n(texts, 1), 4.0 / 6.0);
  EXPECT_DOUBLE_EQ(distinct_n(texts, 2), 3.0 / 4.0);
  EXPECT_DOUBLE_EQ(distinct_n(texts, 3), 1.0);
  // n-grams do not cross texts: "cat sat the" is not a trigram here.
  EXPECT_DOUBLE_EQ(distinct_n({"a a a a"}, 2), 1.0 / 3.0);
}

TEST(Diversity, NothingToCountIsZero) {
  EXPECT_EQ(distinct_n({}, 1), 0.0);
  EXPECT_EQ(distinct_n({"", "  !! "}, 1), 0.0);
  EXPECT_EQ(distinct_n({"one two"}, 3), 0.0);
  EXPECT_THROW(distinct_n({"x"}, 0), Error);
}

}  // namespace
}  // namespace sluice
