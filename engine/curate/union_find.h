// Disjoint sets over indices 0..n-1 whose representative is always the lowest index of its set:
// deduplication's clusters, where the lowest index is the text that is kept. Union by the lower
// root with path halving: near-constant time per call, and the same sets and roots whatever the
// order of unions.
#pragma once

#include <cstdint>
#include <numeric>
#include <vector>

namespace sluice {

class UnionFind {
 public:
  explicit UnionFind(size_t size) : parent_(size) {
    std::iota(parent_.begin(), parent_.end(), uint32_t{0});
  }

  // Returns the lowest index of x's set.
  uint32_t find(uint32_t x) {
    while (parent_[x] != x) {
      parent_[x] = parent_[parent_[x]];
      x = parent_[x];
    }
    return x;
  }

  // Joins the sets of a and b; the lower of the two roots becomes the root.
  void unite(uint32_t a, uint32_t b) {
    const uint32_t root_a = find(a), root_b = find(b);
    if (root_a < root_b) {
      parent_[root_b] = root_a;
    } else if (root_b < root_a) {
      parent_[root_a] = root_b;
    }
  }

 private:
  std::vector<uint32_t> parent_;
};

}  // namespace sluice
