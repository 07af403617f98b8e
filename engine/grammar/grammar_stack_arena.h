// The matcher's parse stacks, shared and interned: a stack is the id of its top node, and each
// node holds a grammar position (the next symbol to match in that frame) and its parent's id, so
// the many stacks of a nondeterministic parse share their common bottoms, copying a stack is
// copying an int, and equal stacks have equal ids (a set of stacks is a sorted id vector).
//
// Stepping expands rule references until every top is a character class, so a state is always
// "the classes that may come next". Continuations that are the end of an alternative are not
// pushed (a tail call), so right-recursive repeats keep the stacks flat. Stacks deeper than
// max_depth are dropped and noted: nesting is bounded. So is the work: each step of the
// matcher (a byte, the root's closure) may take kMaxStepWork expansion steps and keep
// kMaxGrammarStacks stacks; past either it ends with no stack and too_many_stacks set
// (grammar_budget.h).
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "engine/grammar/grammar.h"
#include "engine/grammar/utf8_decoder.h"

namespace sluice {

// The empty stack: the root rule has matched completely.
inline constexpr int32_t kAcceptedStack = -1;

class GrammarStackArena {
 public:
  GrammarStackArena(const Grammar& grammar, int max_depth);

  // Appends to out the stacks reached from the frame (position, parent) by expanding references
  // and ends until each top is a Chars or Sentinel symbol (or the stack is empty). Stops, with
  // too_many_stacks set, once the work allowance (set_work_allowance) is spent.
  void expand(uint32_t position, int32_t parent, std::vector<int32_t>& out);
  // Allows the expansions that follow num_steps steps in all (step_byte and root_stacks set
  // kMaxStepWork themselves). Returns the steps taken since the last call.
  size_t set_work_allowance(size_t num_steps);

  // Steps stacks over one byte of text with the pending character in utf8 (updated). out
  // receives the surviving stacks, sorted and unique. Returns whether any survived. Sets
  // *hit_sentinel when a Sentinel top was asked to match a character (mask precomputation).
  bool step_byte(std::span<const int32_t> stacks, Utf8Decoder& utf8, uint8_t byte,
                 std::vector<int32_t>& out, bool* hit_sentinel);

  // Returns the stack (position, parent) as is (no expansion); -2 past max_depth.
  int32_t push_frame(uint32_t position, int32_t parent) { return intern(position, parent); }

  // The initial stacks of the root rule, sorted and unique.
  std::vector<int32_t> root_stacks();

  uint32_t position(int32_t stack) const { return nodes_[stack].position; }
  int32_t parent(int32_t stack) const { return nodes_[stack].parent; }
  int depth(int32_t stack) const { return stack < 0 ? 0 : nodes_[stack].depth; }
  int max_depth() const { return max_depth_; }

  // Nodes made after mark() can be dropped with rollback(mark) once no stack refers to them.
  size_t mark() const { return nodes_.size(); }
  void rollback(size_t mark);
  // Keeps only the nodes of stacks (and their parents), renumbered: stacks are rewritten with
  // the new ids and sorted. Precondition: no other id of this arena is held (no open mark).
  void compact(std::vector<int32_t>& stacks);

  // Whether a stack was dropped for nesting past max_depth / a state for too many stacks since
  // the flags were cleared.
  bool depth_exceeded = false;
  bool too_many_stacks = false;

 private:
  struct Node {
    uint32_t position;
    int32_t parent;
    int depth;
  };
  // Returns the id of the node (position, parent), making it when new; -2 past max_depth.
  int32_t intern(uint32_t position, int32_t parent);
  static uint64_t key(uint32_t position, int32_t parent) {
    return (uint64_t{position} << 32) | static_cast<uint32_t>(parent);
  }

  const Grammar* grammar_;
  int max_depth_;
  std::vector<Node> nodes_;
  std::unordered_map<uint64_t, int32_t> index_;
  std::vector<std::pair<uint32_t, int32_t>> work_;  // scratch of expand
  size_t work_left_ = kMaxStepWork;                 // expansion steps still allowed
  size_t work_allowed_ = kMaxStepWork;              // the allowance work_left_ started from
};

}  // namespace sluice
