// The server's grammars by source: one Grammar per source while it is recently used, a bounded
// number of them, and build errors passed on.
#include "app/server/grammar_cache.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/core/error.h"

namespace sluice::test {
namespace {

GrammarSource regex(const std::string& text) {
  return GrammarSource{GrammarSourceKind::Regex, "structured_outputs.regex", text, {}};
}

TEST(GrammarCache, SameSourceSameGrammarAndTheLeastRecentlyUsedGoes) {
  GrammarCache cache(2);
  const auto a = cache.get(regex("a+"));
  EXPECT_EQ(cache.get(regex("a+")), a);
  const auto b = cache.get(regex("b+"));
  EXPECT_NE(b, a);
  cache.get(regex("a+"));  // a is now the most recently used
  cache.get(regex("c+"));  // so b goes
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_EQ(cache.get(regex("a+")), a);
  EXPECT_NE(cache.get(regex("b+")), b);
}

TEST(GrammarCache, ChoicesAreKeyedWhole) {
  GrammarCache cache;
  const GrammarSource ab{GrammarSourceKind::Choice, "c", "", {"a", "b"}};
  const GrammarSource a_b{GrammarSourceKind::Choice, "c", "", {"a|1:b"}};
  EXPECT_NE(cache.get(ab), cache.get(a_b));
}

TEST(GrammarCache, BuildErrorsNameTheSource) {
  GrammarCache cache;
  try {
    cache.get(regex("(a"));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("structured_outputs.regex"));
  }
  EXPECT_EQ(cache.size(), 0u);
}

}  // namespace
}  // namespace sluice::test
