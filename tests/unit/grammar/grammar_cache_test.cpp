// GrammarCache: one Grammar per source while it is recently used, a bounded
// number and size of them, build errors passed on, and a slow build holding up no other lookup.
#include "engine/grammar/grammar_cache.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

#include "engine/core/error.h"

namespace sluice::test {
namespace {

GrammarSource regex_of(const std::string& text) {
  return GrammarSource{GrammarSourceKind::Regex, "structured_outputs.regex", text, {}};
}

TEST(GrammarCache, SameSourceSameGrammarAndTheLeastRecentlyUsedGoes) {
  GrammarCache cache(2);
  const auto a = cache.get(regex_of("a+"));
  EXPECT_EQ(cache.get(regex_of("a+")), a);
  const auto b = cache.get(regex_of("b+"));
  EXPECT_NE(b, a);
  cache.get(regex_of("a+"));  // a is now the most recently used
  cache.get(regex_of("c+"));  // so b goes
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_EQ(cache.get(regex_of("a+")), a);
  EXPECT_NE(cache.get(regex_of("b+")), b);
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
    cache.get(regex_of("(a"));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("structured_outputs.regex"));
  }
  EXPECT_EQ(cache.size(), 0u);
}

TEST(GrammarCache, TheSymbolsHeldStayWithinTheBudget) {
  const size_t one = build_grammar(regex_of("[a-z]{0,1000}")).num_positions();
  GrammarCache cache(64, 3 * one);
  for (int i = 0; i < 10; ++i) cache.get(regex_of("[a-z]{0," + std::to_string(1000 - i) + "}"));
  EXPECT_LE(cache.num_symbols(), 3 * one);
  EXPECT_EQ(cache.size(), 3u);
  // The newest is kept whatever its size.
  cache.get(regex_of("[a-z]{0,9000}"));
  EXPECT_EQ(cache.size(), 1u);
}

// A grammar that takes long to compile (up to the compile budget) is built outside the lock:
// requests for grammars already held are answered meanwhile.
TEST(GrammarCache, ASlowBuildDoesNotHoldUpOtherLookups) {
  std::promise<void> release_slow;
  std::shared_future<void> slow_may_finish = release_slow.get_future().share();
  std::promise<void> slow_started;
  GrammarCache cache(8, 4 * kMaxGrammarSymbols, [&](const GrammarSource& source) {
    if (source.text == "slow") {
      slow_started.set_value();
      slow_may_finish.wait();
    }
    return build_grammar(source);
  });
  const auto held = cache.get(regex_of("held"));
  auto slow = std::async(std::launch::async, [&] { return cache.get(regex_of("slow")); });
  slow_started.get_future().wait();
  auto lookup = std::async(std::launch::async, [&] { return cache.get(regex_of("held")); });
  const bool answered = lookup.wait_for(std::chrono::seconds(30)) == std::future_status::ready;
  release_slow.set_value();
  ASSERT_TRUE(answered) << "a lookup of a held grammar waited for another source's build";
  EXPECT_EQ(lookup.get(), held);
  EXPECT_NE(slow.get(), nullptr);
}

// Builds past the cache's allowance wait for a turn: their memory is bounded whatever the
// number of clients compiling at once.
TEST(GrammarCache, AtMostTheAllowedNumberOfBuildsRunAtOnce) {
  std::atomic<int> running = 0, most_running = 0;
  std::promise<void> release;
  std::shared_future<void> may_finish = release.get_future().share();
  GrammarCache cache(
      8, 4 * kMaxGrammarSymbols,
      [&](const GrammarSource& source) {
        const int now = ++running;
        for (int seen = most_running;
             now > seen && !most_running.compare_exchange_weak(seen, now);) {
        }
        may_finish.wait();
        --running;
        return build_grammar(source);
      },
      2);
  std::vector<std::future<std::shared_ptr<const Grammar>>> builds;
  for (int i = 0; i < 5; ++i) {
    builds.push_back(std::async(
        std::launch::async, [&cache, i] { return cache.get(regex_of("x" + std::to_string(i))); }));
  }
  // Let the five threads reach the cache; two may be in the builder, three must wait.
  for (int polls = 0; polls < 3000 && running < 2; ++polls)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(running.load(), 2);
  release.set_value();
  for (auto& build : builds) EXPECT_NE(build.get(), nullptr);
  EXPECT_EQ(most_running.load(), 2);
}

}  // namespace
}  // namespace sluice::test
