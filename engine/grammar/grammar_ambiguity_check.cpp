#include "engine/grammar/grammar_ambiguity_check.h"

#include <algorithm>
#include <map>
#include <vector>

#include "engine/core/error.h"
#include "engine/grammar/grammar_stack_arena.h"
#include "engine/tokenizer/unicode.h"

namespace sluice {

namespace {

// How far the walk for growing ambiguity reads, and how many stacks vote on its next character.
constexpr size_t kMaxWalkCodePoints = 512;
constexpr size_t kMaxVotingStacks = 256;

// Returns the code point most stacks can read next: of the lowest code point of each voting
// stack's class, the one the most classes contain (ties to the lowest); -1 when no stack reads.
int64_t most_shared_next_code_point(const Grammar& grammar, const GrammarStackArena& arena,
                                    const std::vector<int32_t>& stacks) {
  std::vector<const CharClass*> classes;
  for (const int32_t stack : stacks) {
    if (stack < 0) continue;
    const GrammarSymbol& top = grammar.symbol(arena.position(stack));
    if (top.kind == GrammarSymbolKind::Chars) classes.push_back(&grammar.char_class(top.value));
    if (classes.size() == kMaxVotingStacks) break;
  }
  std::map<uint32_t, size_t> votes;
  for (const CharClass* candidate : classes) votes.emplace(candidate->ranges().front().first, 0);
  for (auto& [code_point, num_votes] : votes) {
    for (const CharClass* chars : classes) num_votes += chars->contains(code_point) ? 1 : 0;
  }
  int64_t best = -1;
  size_t best_votes = 0;
  for (const auto& [code_point, num_votes] : votes) {
    if (num_votes > best_votes) {
      best = code_point;
      best_votes = num_votes;
    }
  }
  return best;
}

// Returns text for an error message: its first 40 bytes, control bytes as \xNN.
std::string printable(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size() && i < 40; ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte >= 0x20 && byte != 0x7F) {
      out += text[i];
    } else {
      out += "\\x";
      out += "0123456789ABCDEF"[byte >> 4];
      out += "0123456789ABCDEF"[byte & 15];
    }
  }
  return text.size() > 40 ? out + "..." : out;
}

// Ambiguity that grows with the input — (a{1,100}){1,100} holds one parse per split of the
// a's read so far — shows in no closure. Reads the grammar along the text most of its parses
// agree on, a character at a time, and refuses it when a step passes the matcher's bounds: the
// text is then a witness that a request could meet the same. A walk that ends (nothing more to
// read, or its share of the compile budget spent) proves nothing and refuses nothing.
void check_growing_ambiguity(const Grammar& grammar, const std::string& source_name) {
  GrammarStackArena arena(grammar, kDefaultMaxGrammarDepth);
  std::vector<int32_t> stacks = arena.root_stacks(), next;
  std::string text;
  size_t num_steps = 0;
  for (size_t i = 0; i < kMaxWalkCodePoints && num_steps < kMaxProbeSteps / 2; ++i) {
    const int64_t code_point = most_shared_next_code_point(grammar, arena, stacks);
    if (code_point < 0) return;
    const std::string bytes = utf8_encode(static_cast<char32_t>(code_point));
    Utf8Decoder utf8;
    for (const char byte : bytes) {
      arena.too_many_stacks = false;
      const bool has_stacks =
          arena.step_byte(stacks, utf8, static_cast<uint8_t>(byte), next, nullptr);
      num_steps += arena.set_work_allowance(kMaxStepWork);
      if (arena.too_many_stacks) {
        fail(source_name, ": the grammar is too ambiguous: after the ", text.size() + bytes.size(),
             " bytes \"", printable(text + bytes), "\" its parse is in more than ",
             kMaxGrammarStacks,
             " states at once, the limit of one step of the matcher. Bounded repeats nested in "
             "each other whose parts can be split more than one way multiply their counts: "
             "(a{1,100}){1,100} holds a parse per split; write a{1,10000}");
      }
      if (!has_stacks) return;
      stacks.swap(next);
    }
    text += bytes;
    if (arena.mark() > (size_t{1} << 16)) arena.compact(stacks);
  }
}

}  // namespace

void check_grammar_ambiguity(const Grammar& grammar, const std::string& source_name) {
  GrammarStackArena arena(grammar, kDefaultMaxGrammarDepth);
  // The rule's parse returns into the Sentinel: what follows the rule is another rule's closure.
  const int32_t enclosing = arena.push_frame(Grammar::kSentinelPosition, -1);
  const size_t base_mark = arena.mark();
  std::vector<int32_t> stacks;
  size_t num_steps = 0;
  for (uint32_t rule_idx = 0; rule_idx < grammar.num_rules(); ++rule_idx) {
    stacks.clear();
    arena.too_many_stacks = false;
    arena.set_work_allowance(kMaxClosureSteps);
    for (uint32_t start : grammar.alternatives(rule_idx)) arena.expand(start, enclosing, stacks);
    num_steps += arena.set_work_allowance(kMaxClosureSteps);
    std::sort(stacks.begin(), stacks.end());
    stacks.erase(std::unique(stacks.begin(), stacks.end()), stacks.end());
    if (arena.too_many_stacks || stacks.size() > kMaxGrammarStacks) {
      fail(source_name, ": rule '", grammar.rule_name(rule_idx),
           "' is too ambiguous: before its first character its parse can be in more than ",
           kMaxGrammarStacks, " states at once (or take more than ", kMaxClosureSteps,
           " steps to find them), the limit of one step of the matcher. Repeats of something "
           "that can match nothing, nested in each other, multiply their counts: "
           "((a{0,100}){0,100}){0,100} is a million parses; write a{0,1000000} or make the "
           "inner repeats match at least one character");
    }
    if (num_steps > kMaxProbeSteps) {
      fail(source_name, ": the grammar is too large to check within its compile budget (",
           kMaxProbeSteps, " expansion steps, reached at rule '", grammar.rule_name(rule_idx),
           "')");
    }
    arena.rollback(base_mark);
  }
  check_growing_ambiguity(grammar, source_name);
}

}  // namespace sluice
