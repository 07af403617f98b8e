// The engine checks sizes against the machine before it allocates: a KV pool larger than the
// available host memory is refused naming the option that sized it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/memory_limit.h"
#include "tests/unit/engine/engine_test_util.h"

namespace sluice {
namespace {

TEST(EngineSizeChecks, KvCacheLargerThanTheMachineIsRefusedNamingTheOption) {
  const test::StoriesModel stories;
  // A pebibyte of KV cache, and a billion blocks: both far past any machine's memory.
  test::expect_error_within_memory_limit(
      [&] { stories.make_engine(EngineConfig{.kv_cache_bytes = size_t{1} << 50}); },
      {"--kv-cache-bytes 1125899906842624", "available"});
  test::expect_error_within_memory_limit(
      [&] { stories.make_engine(EngineConfig{.num_kv_blocks = 1 << 30}); },
      {"--kv-blocks 1073741824", "available"});
}

TEST(EngineSizeChecks, KvCacheThatFitsIsAllocated) {
  const test::StoriesModel stories;
  EXPECT_EQ(stories.make_engine(EngineConfig{.num_kv_blocks = 64})->num_kv_blocks(), 64);
}

}  // namespace
}  // namespace sluice
