// How much one render may do. A chat template comes with a downloaded model, so a hostile one
// (an endless loop, macros that call themselves twice, a big string scanned in every
// iteration, a value doubled until memory runs out, expressions nested past the stack) must
// end with an error instead of hanging or crashing. Three counters, each with a limit far
// above what real chat templates need:
//  - steps: loop iterations (counting the items a loop's `if` looks at), macro calls and
//    loop() calls;
//  - bytes: the value_bytes of every value an operator, filter, test or call reads or makes,
//    and of all text written, so that the work on data is bounded as well as its size;
//  - nesting: expressions and statement bodies being evaluated inside one another.
// Single values are bounded apart, before they are allocated (kMaxStringBytes, kMaxListItems).
#pragma once

#include <cstdint>

#include "engine/template/call_args.h"
#include "engine/template/template_value.h"

namespace sluice::jinja {

// Nesting deeper than this fails. A level takes a few stack frames (about 1 KiB without
// sanitizers), so a render stays within a few MiB of stack. Only recursion (macros, loop())
// reaches it: the parser allows 200 nested blocks, 200 nested brackets and 500 operator links
// in one expression.
inline constexpr int kMaxRenderNesting = 1000;

class RenderBudget {
 public:
  RenderBudget(int64_t max_steps, uint64_t max_bytes)
      : max_steps_(max_steps), max_bytes_(max_bytes) {}

  // Counts one step; throws RenderFault past max_steps.
  void count_step();
  // Counts num_bytes of work; throws RenderFault past max_bytes.
  void spend_bytes(uint64_t num_bytes);
  // Counts value_bytes(value).
  void spend_value(const Value& value) { spend_bytes(value_bytes(value)); }
  // Counts the value_bytes of every argument.
  void spend_args(const CallArgs& args);
  // Counts searching haystack for needle, which may compare every pair of their bytes.
  void spend_search(uint64_t haystack_bytes, uint64_t needle_bytes);

  // Enters one level of nesting; throws RenderFault past kMaxRenderNesting.
  void enter();
  // Leaves the level entered last.
  void leave() { --nesting_; }

 private:
  int64_t num_steps_ = 0;
  int64_t max_steps_;
  uint64_t num_bytes_ = 0;
  uint64_t max_bytes_;
  int nesting_ = 0;
};

// Holds one level of nesting for its lifetime.
class NestingGuard {
 public:
  explicit NestingGuard(RenderBudget& budget) : budget_(budget) { budget_.enter(); }
  ~NestingGuard() { budget_.leave(); }
  NestingGuard(const NestingGuard&) = delete;
  NestingGuard& operator=(const NestingGuard&) = delete;

 private:
  RenderBudget& budget_;
};

}  // namespace sluice::jinja
