#include "engine/grammar/grammar_stack_arena.h"

#include <algorithm>
#include <cassert>

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

void GrammarStackArena::expand(uint32_t position, int32_t parent, std::vector<int32_t>& out) {
  work_.clear();
  work_.emplace_back(position, parent);
  while (!work_.empty()) {
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
  for (uint32_t start : grammar_->alternatives(grammar_->root_rule())) {
    expand(start, -1, stacks);
  }
  std::sort(stacks.begin(), stacks.end());
  stacks.erase(std::unique(stacks.begin(), stacks.end()), stacks.end());
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
  if (out.size() > kMaxGrammarStacks) {
    too_many_stacks = true;
    out.clear();
  }
  return !out.empty();
}

}  // namespace sluice
