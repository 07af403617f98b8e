// Thousands of random allocate / append / fork / free operations against KvCacheManager, with
// a simulated K/V memory that stores each slot's token: after every operation the invariants
// must hold and every request must read back exactly its own tokens through its block table.
// That catches a missing copy-on-write (a sibling's token overwrites ours), a stale prefix hit
// (a revived block holds other tokens) and a block handed out twice.
#include "engine/cache/kv_cache_manager.h"

#include <gtest/gtest.h>

#include <map>
#include <ostream>
#include <random>
#include <vector>

namespace sluice {
namespace {

struct SimRequest {
  std::vector<int32_t> token_ids;  // the request's tokens; the first num_allocated have K/V
  int num_allocated = 0;
};

struct PropertyCase {
  uint32_t seed;
  int num_blocks;
  int block_size;
  bool enable_prefix_caching;
};

class KvCacheSimulation {
 public:
  explicit KvCacheSimulation(const PropertyCase& c)
      : kv_({.num_blocks = c.num_blocks,
             .block_size = c.block_size,
             .enable_prefix_caching = c.enable_prefix_caching}),
        memory_(static_cast<size_t>(c.num_blocks) * c.block_size, -1),
        rng_(c.seed) {
    // A few shared "system prompts" over a tiny vocabulary make prefix hits common.
    for (int i = 0; i < 3; ++i)
      system_prompts_.push_back(random_tokens(uniform(0, 3 * c.block_size)));
  }

  void run(int num_ops) {
    for (int op = 0; op < num_ops; ++op) {
      const int kind = uniform(0, 9);
      if (kind <= 2 || requests_.empty()) {
        start_request();
      } else if (kind <= 6) {
        append_tokens(pick());
      } else if (kind == 7) {
        fork(pick());
      } else {
        free(pick());
      }
      if (testing::Test::HasFatalFailure()) return;
      kv_.check_invariants();
      verify_contents();
      if (testing::Test::HasFatalFailure()) return;
    }
  }

  int num_copies = 0;
  int num_prefix_hit_tokens = 0;
  int num_failed_allocations = 0;
  int num_revived_blocks = 0;

 private:
  int uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  RequestId pick() {
    auto it = requests_.begin();
    std::advance(it, uniform(0, static_cast<int>(requests_.size()) - 1));
    return it->first;
  }
  std::vector<int32_t> random_tokens(int n) {
    std::vector<int32_t> tokens(static_cast<size_t>(n));
    for (int32_t& t : tokens) t = uniform(0, 3);
    return tokens;
  }

  void start_request() {
    std::vector<int32_t> tokens = system_prompts_[uniform(0, 2)];
    const std::vector<int32_t> tail = random_tokens(uniform(1, 4 * kv_.block_size()));
    tokens.insert(tokens.end(), tail.begin(), tail.end());
    const CachedPrefix prefix = kv_.find_cached_prefix(tokens);
    // A hit must hold exactly the tokens looked up (the K/V those tokens produced).
    for (int position = 0; position < prefix.num_tokens; ++position) {
      const int32_t block_id = prefix.block_ids[position / kv_.block_size()];
      const size_t slot =
          static_cast<size_t>(block_id) * kv_.block_size() + position % kv_.block_size();
      ASSERT_EQ(memory_[slot], tokens[position]) << "stale prefix hit at position " << position;
    }
    for (const int32_t block_id : prefix.block_ids) {
      if (kv_.block_pool().block(block_id).ref_count == 0) ++num_revived_blocks;
    }
    const int num_new = uniform(1, static_cast<int>(tokens.size()) - prefix.num_tokens);
    const RequestId request_id = next_request_id_++;
    const bool can = kv_.can_allocate_slots(request_id, num_new, prefix);
    const int num_free_before = kv_.num_free_blocks();
    const bool allocated = kv_.allocate_slots(request_id, num_new, prefix);
    ASSERT_EQ(can, allocated);
    if (!allocated) {
      ++num_failed_allocations;
      ASSERT_FALSE(kv_.has_request(request_id));
      ASSERT_EQ(kv_.num_free_blocks(), num_free_before);
      return;
    }
    num_prefix_hit_tokens += prefix.num_tokens;
    requests_[request_id] = SimRequest{tokens, prefix.num_tokens};
    write_new_tokens(request_id, num_new);
  }

  void append_tokens(RequestId request_id) {
    SimRequest& request = requests_[request_id];
    // Caught up: the model "samples" a token; otherwise compute more of what is known.
    if (request.num_allocated == static_cast<int>(request.token_ids.size())) {
      request.token_ids.push_back(uniform(0, 3));
    }
    const int num_pending = static_cast<int>(request.token_ids.size()) - request.num_allocated;
    const int num_new = uniform(1, num_pending);
    const std::vector<int32_t> table_before(kv_.block_table(request_id).begin(),
                                            kv_.block_table(request_id).end());
    const bool can = kv_.can_allocate_slots(request_id, num_new);
    const bool allocated = kv_.allocate_slots(request_id, num_new);
    ASSERT_EQ(can, allocated);
    if (!allocated) {
      ++num_failed_allocations;
      const auto table = kv_.block_table(request_id);
      ASSERT_TRUE(std::equal(table.begin(), table.end(), table_before.begin(), table_before.end()));
      ASSERT_EQ(kv_.num_allocated_tokens(request_id), request.num_allocated);
      return;
    }
    write_new_tokens(request_id, num_new);
  }

  // Applies the step's copies, then writes the new tokens as the forward pass would, then
  // registers the blocks that became full.
  void write_new_tokens(RequestId request_id, int num_new) {
    for (const BlockCopy& copy : kv_.take_block_copies()) {
      ++num_copies;
      const size_t block_size = static_cast<size_t>(kv_.block_size());
      std::copy_n(memory_.begin() + copy.src_block_id * block_size, block_size,
                  memory_.begin() + copy.dst_block_id * block_size);
    }
    SimRequest& request = requests_[request_id];
    for (int i = 0; i < num_new; ++i) {
      const int position = request.num_allocated + i;
      memory_[static_cast<size_t>(kv_.slot(request_id, position))] = request.token_ids[position];
    }
    request.num_allocated += num_new;
    ASSERT_EQ(kv_.num_allocated_tokens(request_id), request.num_allocated);
    kv_.cache_full_blocks(request_id, request.token_ids, request.num_allocated);
  }

  void fork(RequestId parent_id) {
    const SimRequest& parent = requests_[parent_id];
    const RequestId child_id = next_request_id_++;
    ASSERT_TRUE(kv_.can_fork(parent_id, child_id));
    kv_.fork(parent_id, child_id);
    SimRequest child;
    child.token_ids.assign(parent.token_ids.begin(),
                           parent.token_ids.begin() + parent.num_allocated);
    child.num_allocated = parent.num_allocated;
    requests_[child_id] = child;
  }

  // Finish, abort and preemption all look alike to the cache.
  void free(RequestId request_id) {
    kv_.free(request_id);
    requests_.erase(request_id);
    ASSERT_FALSE(kv_.has_request(request_id));
  }

  void verify_contents() const {
    for (const auto& [request_id, request] : requests_) {
      ASSERT_EQ(kv_.num_allocated_tokens(request_id), request.num_allocated);
      for (int position = 0; position < request.num_allocated; ++position) {
        ASSERT_EQ(memory_[static_cast<size_t>(kv_.slot(request_id, position))],
                  request.token_ids[position])
            << "request " << request_id << " position " << position;
      }
    }
  }

  KvCacheManager kv_;
  std::vector<int32_t> memory_;  // [num_blocks * block_size] the token whose K/V a slot holds
  std::mt19937 rng_;
  std::vector<std::vector<int32_t>> system_prompts_;
  std::map<RequestId, SimRequest> requests_;
  RequestId next_request_id_ = 1;
};

void PrintTo(const PropertyCase& c, std::ostream* out) {
  *out << "seed " << c.seed << ", " << c.num_blocks << " blocks of " << c.block_size
       << (c.enable_prefix_caching ? ", prefix caching" : ", no prefix caching");
}

class KvCacheProperty : public testing::TestWithParam<PropertyCase> {};

TEST_P(KvCacheProperty, RandomOperationsKeepInvariantsAndContents) {
  KvCacheSimulation simulation(GetParam());
  simulation.run(8000);
  if (HasFatalFailure()) return;
  // The run must have exercised what it is meant to test.
  // With one token per block every block is full once written, so nothing is ever copied.
  if (GetParam().block_size > 1) {
    EXPECT_GT(simulation.num_copies, 0);
  }
  EXPECT_GT(simulation.num_failed_allocations, 0);
  if (GetParam().enable_prefix_caching) {
    EXPECT_GT(simulation.num_prefix_hit_tokens, 0);
    EXPECT_GT(simulation.num_revived_blocks, 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, KvCacheProperty,
                         testing::Values(PropertyCase{1, 16, 4, true}, PropertyCase{2, 40, 2, true},
                                         PropertyCase{3, 24, 8, true}, PropertyCase{4, 9, 1, true},
                                         PropertyCase{5, 32, 4, false},
                                         PropertyCase{6, 64, 16, true}));

}  // namespace
}  // namespace sluice
