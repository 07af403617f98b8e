// `sluice bench --dummy-weights P --save-gguf FILE`: writes the dummy model as GGUF and exits
// without benchmarking; its errors keep bench's exit codes (2 usage, 1 the run failed).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "engine/model/gguf_reader.h"
#include "tests/integration/cli_test_util.h"

namespace sluice::test {
namespace {

using ::testing::HasSubstr;

TEST(BenchSaveGguf, WritesTheDummyModelInTheRequestedType) {
  const std::string dir = make_temp_dir("bench-save-gguf");
  auto r = run_sluice({"bench", "--dummy-weights", "tiny-gemma3", "--save-gguf", dir + "/g.gguf"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto gguf = GgufFile::open(dir + "/g.gguf");
  EXPECT_EQ(gguf->get_string("general.architecture"), "gemma3");
  EXPECT_EQ(gguf->find_tensor("blk.0.attn_q.weight")->dtype, DType::F32);

  r = run_sluice({"bench", "--dummy-weights", "tiny-llama", "--dummy-dtype", "Q4_K", "--save-gguf",
                  dir + "/q.gguf"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  gguf = GgufFile::open(dir + "/q.gguf");
  EXPECT_EQ(gguf->find_tensor("blk.1.ffn_up.weight")->ggml_type, 12u);   // Q4_K
  EXPECT_EQ(gguf->find_tensor("blk.1.ffn_norm.weight")->ggml_type, 0u);  // F32
}

// A mixture of experts cut to its first layers with --dummy-layers: a qwen3moe file of one layer.
TEST(BenchSaveGguf, WritesAMoePresetCutToItsFirstLayers) {
  const std::string dir = make_temp_dir("bench-save-gguf-moe");
  auto r = run_sluice({"bench", "--dummy-weights", "tiny-qwen3moe", "--dummy-layers", "1",
                       "--dummy-dtype", "q8_0", "--save-gguf", dir + "/m.gguf"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto gguf = GgufFile::open(dir + "/m.gguf");
  EXPECT_EQ(gguf->get_string("general.architecture"), "qwen3moe");
  EXPECT_EQ(gguf->get_int("qwen3moe.block_count"), 1);
  EXPECT_EQ(gguf->get_int("qwen3moe.expert_count"), 4);
  EXPECT_EQ(gguf->find_tensor("blk.0.ffn_up_exps.weight")->ggml_type, 8u);  // Q8_0
  EXPECT_EQ(gguf->find_tensor("blk.1.attn_q.weight"), nullptr);

  r = run_sluice(
      {"bench", "--model", "m.gguf", "--dummy-layers", "2", "--save-gguf", dir + "/x.gguf"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--dummy-layers"));
}

TEST(BenchSaveGguf, ErrorsNameTheProblem) {
  const std::string dir = make_temp_dir("bench-save-gguf-errors");
  auto r = run_sluice(
      {"bench", "--dummy-weights", "tiny-llama", "--save-gguf", dir + "/missing/x.gguf"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr(dir + "/missing/x.gguf"));

  r = run_sluice({"bench", "--model", "m.gguf", "--save-gguf", dir + "/x.gguf"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--dummy-weights"));

  r = run_sluice({"bench", "--dummy-weights", "tiny-llama", "--dummy-dtype", "q9_k", "--save-gguf",
                  dir + "/x.gguf"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("q4_k"));  // the accepted types are listed

  r = run_sluice({"bench", "--dummy-weights", "stories15M", "--dummy-dtype", "q4_k", "--save-gguf",
                  dir + "/x.gguf"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("token_embd.weight"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/x.gguf"));

  r = run_sluice({"bench", "--help"});
  EXPECT_THAT(r.out, HasSubstr("--save-gguf"));
}

}  // namespace
}  // namespace sluice::test
