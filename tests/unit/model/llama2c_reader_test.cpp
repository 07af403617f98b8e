#include "engine/model/llama2c_reader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "engine/core/error.h"
#include "tests/support/test_paths.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

// A header (dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len) followed by
// num_floats zero weights.
std::string checkpoint_bytes(const int32_t (&header)[7], size_t num_floats) {
  std::string bytes(sizeof header + num_floats * sizeof(float), '\0');
  std::memcpy(bytes.data(), header, sizeof header);
  return bytes;
}

// Found by fuzzing (tests/fuzz, fuzz_llama2c_checkpoint): 2^30 layers of width 1 with a
// 1431655763-wide FFN, vocab 2^29 and seq_len 2^29 imply 2^62 + 1 floats, whose byte count
// wraps to 4 in 64 bits, so a 32-byte file matched "its" size and was taken for a checkpoint of
// a billion layers.
TEST(Llama2cReader, HeaderWhoseSizeWrapsAroundIsRefused) {
  const std::string path = test::make_temp_dir("llama2c") + "/wraps.bin";
  test::write_file(path, checkpoint_bytes({1, 1431655763, 1 << 30, 1, 1, 1 << 29, 1 << 29}, 1));
  ASSERT_FALSE(is_llama2c_file(path));
  try {
    read_llama2c(path);
    FAIL() << "expected an error for " << path;
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr(path));
    EXPECT_THAT(e.what(), HasSubstr("n_layers 1073741824"));
  }
}

TEST(Llama2cReader, SmallCheckpointHasItsTensors) {
  const std::string path = test::make_temp_dir("llama2c") + "/tiny.bin";
  // dim 4, hidden 8, 1 layer, 2 heads, 1 KV head, vocab 6, seq_len 4: 188 floats.
  test::write_file(path, checkpoint_bytes({4, 8, 1, 2, 1, 6, 4}, 188));
  ASSERT_TRUE(is_llama2c_file(path));
  const Llama2cCheckpoint checkpoint = read_llama2c(path);
  EXPECT_EQ(checkpoint.config.num_layers, 1);
  EXPECT_EQ(checkpoint.config.kv_size(), 2);
  EXPECT_TRUE(checkpoint.tensors.contains("blk.0.ffn_down.weight"));
  EXPECT_FALSE(checkpoint.tensors.contains("output.weight"));
}

}  // namespace
}  // namespace sluice
