#include "engine/tokenizer/symbol_merger.h"

#include <cassert>
#include <queue>

namespace sluice {

namespace {

struct Candidate {
  double priority = 0.0;
  int left = 0;
  int right = 0;
  // Symbols only grow when merged, so equal sizes at pop time prove the pair is unchanged.
  size_t left_size = 0;
  size_t right_size = 0;
};

// Orders the heap: highest priority on top, then the leftmost pair.
struct CandidateOrder {
  bool operator()(const Candidate& a, const Candidate& b) const {
    if (a.priority != b.priority) return a.priority < b.priority;
    return a.left > b.left;
  }
};

struct Chain {
  std::vector<std::string> text;
  std::vector<int> prev;
  std::vector<int> next;
  std::vector<bool> is_alive;
};

}  // namespace

std::vector<std::string> merge_symbols(std::vector<std::string> symbols,
                                       const PairPriority& priority) {
  const int num_symbols = static_cast<int>(symbols.size());
  if (num_symbols < 2) return symbols;

  Chain chain{std::move(symbols), {}, {}, std::vector<bool>(num_symbols, true)};
  for (int i = 0; i < num_symbols; ++i) {
    chain.prev.push_back(i - 1);
    chain.next.push_back(i + 1 < num_symbols ? i + 1 : -1);
  }

  std::priority_queue<Candidate, std::vector<Candidate>, CandidateOrder> heap;
  const auto consider = [&](int left, int right) {
    if (left < 0 || right < 0) return;
    if (const auto p = priority(chain.text[left], chain.text[right])) {
      heap.push({*p, left, right, chain.text[left].size(), chain.text[right].size()});
    }
  };
  for (int i = 0; i + 1 < num_symbols; ++i) consider(i, i + 1);

  while (!heap.empty()) {
    const Candidate top = heap.top();
    heap.pop();
    const bool is_current = chain.is_alive[top.left] && chain.is_alive[top.right] &&
                            chain.next[top.left] == top.right &&
                            chain.text[top.left].size() == top.left_size &&
                            chain.text[top.right].size() == top.right_size;
    if (!is_current) continue;

    chain.text[top.left] += chain.text[top.right];
    chain.text[top.right].clear();
    chain.is_alive[top.right] = false;
    chain.next[top.left] = chain.next[top.right];
    if (chain.next[top.left] >= 0) chain.prev[chain.next[top.left]] = top.left;

    consider(chain.prev[top.left], top.left);
    consider(top.left, chain.next[top.left]);
  }

  std::vector<std::string> merged;
  for (int i = 0; i >= 0; i = chain.next[i]) {
    assert(chain.is_alive[i]);  // symbol 0 is never merged away: it has no left neighbour
    merged.push_back(std::move(chain.text[i]));
  }
  return merged;
}

}  // namespace sluice
