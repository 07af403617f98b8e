// merge_symbols and SpecialTokenSplitter on small hand-made inputs whose answers follow from
// the rules by hand.
#include <gtest/gtest.h>

#include <map>

#include "engine/tokenizer/special_token_splitter.h"
#include "engine/tokenizer/symbol_merger.h"

namespace sluice {
namespace {

std::vector<std::string> chars(const std::string& text) {
  std::vector<std::string> out;
  for (const char c : text) out.emplace_back(1, c);
  return out;
}

// Priority from a table of merged strings (higher merges first).
PairPriority table_priority(std::map<std::string, double> table) {
  return [table = std::move(table)](std::string_view left,
                                    std::string_view right) -> std::optional<double> {
    const auto it = table.find(std::string(left) + std::string(right));
    if (it == table.end()) return std::nullopt;
    return it->second;
  };
}

TEST(SymbolMerger, MergesBestPairFirst) {
  // The higher-scoring of "ab" and "bc" merges; "abc" forms only when it is allowed too.
  EXPECT_EQ(merge_symbols(chars("abc"), table_priority({{"ab", 2}, {"bc", 3}})),
            (std::vector<std::string>{"a", "bc"}));
  EXPECT_EQ(merge_symbols(chars("abc"), table_priority({{"ab", 3}, {"bc", 2}})),
            (std::vector<std::string>{"ab", "c"}));
  EXPECT_EQ(merge_symbols(chars("abc"), table_priority({{"ab", 3}, {"bc", 2}, {"abc", 1}})),
            (std::vector<std::string>{"abc"}));
}

TEST(SymbolMerger, TiesGoToTheLeftmostPair) {
  // "aaa": both pairs "aa" score the same; the left one merges, leaving "aa" + "a".
  EXPECT_EQ(merge_symbols(chars("aaa"), table_priority({{"aa", 1}})),
            (std::vector<std::string>{"aa", "a"}));
  // "aaaa" -> "aa" "aa" -> "aaaa" once that is allowed.
  EXPECT_EQ(merge_symbols(chars("aaaa"), table_priority({{"aa", 1}})),
            (std::vector<std::string>{"aa", "aa"}));
  EXPECT_EQ(merge_symbols(chars("aaaa"), table_priority({{"aa", 2}, {"aaaa", 1}})),
            (std::vector<std::string>{"aaaa"}));
}

TEST(SymbolMerger, NewPairsAfterAMergeCompete) {
  // After "bc" merges, "a"+"bc" (score 5) outranks "bc"+"d" (score 4).
  EXPECT_EQ(merge_symbols(chars("abcd"), table_priority({{"bc", 9}, {"abc", 5}, {"bcd", 4}})),
            (std::vector<std::string>{"abc", "d"}));
  EXPECT_EQ(merge_symbols({}, table_priority({})), std::vector<std::string>{});
  EXPECT_EQ(merge_symbols({"x"}, table_priority({})), std::vector<std::string>{"x"});
}

TEST(SpecialTokenSplitter, LongestMatchAndParseSpecial) {
  const SpecialTokenSplitter splitter({{"<s>", 1, false},
                                       {"<|im_start|>", 5, false},
                                       {"<|im", 6, true},  // a user-defined prefix of a longer one
                                       {"[X]", 7, true}});
  const auto fragments = splitter.split("a<|im_start|>b<|imc[X]", true);
  ASSERT_EQ(fragments.size(), 6u);
  EXPECT_EQ(fragments[0].text, "a");
  EXPECT_FALSE(fragments[0].is_token());
  EXPECT_EQ(fragments[1].token_id, 5);  // the longest token at that position
  EXPECT_EQ(fragments[2].text, "b");
  EXPECT_EQ(fragments[3].token_id, 6);
  EXPECT_EQ(fragments[4].text, "c");
  EXPECT_EQ(fragments[5].token_id, 7);

  // Without parse_special only user-defined tokens split: <|im_start|> yields to "<|im".
  const auto plain = splitter.split("<s><|im_start|>", false);
  ASSERT_EQ(plain.size(), 3u);
  EXPECT_EQ(plain[0].text, "<s>");
  EXPECT_EQ(plain[1].token_id, 6);
  EXPECT_EQ(plain[2].text, "_start|>");
  EXPECT_TRUE(splitter.split("", true).empty());
}

}  // namespace
}  // namespace sluice
