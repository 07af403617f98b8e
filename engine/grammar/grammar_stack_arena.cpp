#include "engine/grammar/grammar_stack_arena.h"

#include <algorithm>
#include <cassert>
#include <utility>

namespace sluice {

GrammarStackArena::GrammarStackArena(const Grammar& grammar, int max_depth)
    : grammar_(&grammar), max_depth_(max_depth) {}

int32_t GrammarStackArena::intern(uint32_t position, int32_t parent) {
  auto [it, inserted] = index_.try_emplace(key(position, parent), 0);
  if (!inserted) return it->second;
  int depth = parent < 0 ? 1 : nodes_[parent].depth + 1;
  if (depth > max_depth_) {
    index_.erase(it);
    depth_exceeded = true;
    return -2;
  }
  nodes_.push_back({position, parent, depth});
  it->second = static_cast<int32_t>(nodes_.size() - 1);
  return it->second;
}

void GrammarStackArena::rollback(size_t mark) {
  assert(mark <= nodes_.size());  // a mark from this arena, not rolled back past
  for (size_t i = mark; i < nodes_.size(); ++i) {
    index_.erase(key(nodes_[i].position, nodes_[i].parent));
  }
  nodes_.resize(mark);
}

size_t GrammarStackArena::set_work_allowance(size_t num_steps) {
  const size_t taken = work_allowed_ - work_left_;
  work_allowed_ = work_left_ = num_steps;
  return taken;
}

void GrammarStackArena::compact(std::vector<int32_t>& stacks) {
  std::vector<Node> old_nodes = std::move(nodes_);
  nodes_.clear();
  index_.clear();
  std::vector<int32_t> new_id(old_nodes.size(), -1);
  std::vector<int32_t> path;
  for (int32_t& stack : stacks) {
    if (stack < 0) continue;
    // Copy the frames from the deepest one not yet copied up to the top.
    path.clear();
    for (int32_t node = stack; node >= 0 && new_id[node] < 0; node = old_nodes[node].parent)
      path.push_back(node);
    for (auto it = path.rbegin(); it != path.rend(); ++it) {
      const Node& node = old_nodes[*it];
      const int32_t parent = node.parent < 0 ? node.parent : new_id[node.parent];
      nodes_.push_back({node.position, parent, node.depth});
      new_id[*it] = static_cast<int32_t>(nodes_.size() - 1);
      index_.emplace(key(node.position, parent), new_id[*it]);
    }
    stack = new_id[stack];
  }
  std::sort(stacks.begin(), stacks.end());
}

void GrammarStackArena::expand(uint32_t position, int32_t parent, std::vector<int32_t>& out) {
  work_.clear();
  work_.emplace_back(position, parent);
  while (!work_.empty()) {
    if (work_left_ == 0) {
      too_many_stacks = true;
      return;
    }
    --work_left_;
    auto [pos, par] = work_.back();
    work_.pop_back();
    const GrammarSymbol& symbol = grammar_->symbol(pos);
    switch (symbol.kind) {
      case GrammarSymbolKind::End:
        if (par < 0) {
          out.push_back(kAcceptedStack);
        } else {
          work_.emplace_back(nodes_[par].position, nodes_[par].parent);
        }
        break;
      case GrammarSymbolKind::Chars:
      case GrammarSymbolKind::Sentinel: {
        int32_t node = intern(pos, par);
        if (node >= 0) out.push_back(node);
        break;
      }
      case GrammarSymbolKind::RuleRef: {
        int32_t base = par;
        if (grammar_->symbol(pos + 1).kind != GrammarSymbolKind::End) {
          base = intern(pos + 1, par);
          if (base == -2) break;
        }
        auto alternatives = grammar_->alternatives(symbol.value);
        for (auto it = alternatives.rbegin(); it != alternatives.rend(); ++it) {
          work_.emplace_back(*it, base);
        }
        break;
      }
    }
  }
}

std::vector<int32_t> GrammarStackArena::root_stacks() {
  std::vector<int32_t> stacks;
  const bool was_too_many = std::exchange(too_many_stacks, false);
  set_work_allowance(kMaxStepWork);
  for (uint32_t start : grammar_->alternatives(grammar_->root_rule())) {
    expand(start, -1, stacks);
  }
  std::sort(stacks.begin(), stacks.end());
  stacks.erase(std::unique(stacks.begin(), stacks.end()), stacks.end());
  if (too_many_stacks || stacks.size() > kMaxGrammarStacks) {
    too_many_stacks = true;
    stacks.clear();
  }
  too_many_stacks |= was_too_many;
  return stacks;
}

bool GrammarStackArena::step_byte(std::span<const int32_t> stacks, Utf8Decoder& utf8, uint8_t byte,
                                  std::vector<int32_t>& out, bool* hit_sentinel) {
  out.clear();
  Utf8Decoder::Status status = utf8.feed(byte);
  if (status == Utf8Decoder::Status::Invalid) return false;
  if (status == Utf8Decoder::Status::Pending) {
    uint32_t lo = utf8.range_lo(), hi = utf8.range_hi();
    for (int32_t stack : stacks) {
      if (stack < 0) continue;
      const GrammarSymbol& symbol = grammar_->symbol(nodes_[stack].position);
      if (symbol.kind == GrammarSymbolKind::Sentinel) {
        if (hit_sentinel) *hit_sentinel = true;
      } else if (grammar_->char_class(symbol.value).intersects(lo, hi)) {
        out.push_back(stack);
      }
    }
    return !out.empty();
  }
  uint32_t cp = utf8.code_point();
  const bool was_too_many = std::exchange(too_many_stacks, false);
  set_work_allowance(kMaxStepWork);
  for (int32_t stack : stacks) {
    if (stack < 0) continue;
    const Node& node = nodes_[stack];
    const GrammarSymbol& symbol = grammar_->symbol(node.position);
    if (symbol.kind == GrammarSymbolKind::Sentinel) {
      if (hit_sentinel) *hit_sentinel = true;
    } else if (grammar_->char_class(symbol.value).contains(cp)) {
      expand(node.position + 1, node.parent, out);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  if (too_many_stacks || out.size() > kMaxGrammarStacks) {
    too_many_stacks = true;
    out.clear();
  }
  too_many_stacks |= was_too_many;
  return !out.empty();
}

}  // namespace sluice
