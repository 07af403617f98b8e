// What a grammar may cost, in one place. A grammar comes from a client (a JSON Schema, a regex, a
// GBNF text, a list of choices), so its compile and every step of its matcher are bounded here,
// and each bound is checked while the work grows, not after it:
//
// - size: a source's text is parsed into at most kMaxGrammarExprs expressions, and repeats are
//   written out as rules when the grammar is lowered (x{0,n} is n nested optionals), so the
//   lowered grammar is counted symbol by symbol against kMaxGrammarSymbols;
// - ambiguity: a parse state is a set of stacks. Nested repeats of something that can be empty,
//   ((a{0,100}){0,100}){0,100}, make the closure of one position the product of their counts
//   (10^6 stacks here) although the grammar is small. Compiling expands the closure of every rule
//   once, each within kMaxGrammarStacks stacks and kMaxClosureSteps steps, and refuses the
//   grammar at the first that does not fit; the whole check stays within kMaxProbeSteps;
// - matching: each step of a matcher (a byte, the root's closure) stays within kMaxGrammarStacks
//   stacks and kMaxStepWork steps; past them the request fails with the reason, never a stall
//   or a growing heap. A grammar that passed the compile check can still grow ambiguous over many
//   bytes ((a{1,100}){1,100} keeps every split of the a's it has read): that is where this bound
//   is met, after kMaxGrammarStacks parses;
// - masks: a compiled grammar's cached token masks share one byte budget (MaskCacheBudget).
#pragma once

#include <cstddef>
#include <cstdint>

namespace sluice {

// How deep the matcher's stacks may nest by default (JSON nesting costs about two levels each).
inline constexpr int kDefaultMaxGrammarDepth = 200;
// The most repetitions a {m,n} may ask for.
inline constexpr uint32_t kMaxGrammarRepeat = 10000;
// The most expressions a grammar's text may parse into (each character of a literal, class,
// reference, group and repeat is one; about 45 MB), counted as the text is parsed.
inline constexpr size_t kMaxGrammarExprs = size_t{1} << 18;
// The most symbols (positions) a lowered grammar may hold: about 40 MB of grammar.
inline constexpr size_t kMaxGrammarSymbols = size_t{1} << 20;
// The most stacks one parse state, or the closure of one rule, may hold.
inline constexpr size_t kMaxGrammarStacks = 4096;
// The most expansion steps the closure of one rule may take when the grammar is compiled.
inline constexpr size_t kMaxClosureSteps = size_t{1} << 16;
// The most expansion steps the compile check of one grammar may take in all (well under a second).
inline constexpr size_t kMaxProbeSteps = size_t{1} << 25;
// The most expansion steps one matcher step (one byte) may take over all its stacks.
inline constexpr size_t kMaxStepWork = size_t{1} << 20;

}  // namespace sluice
