#include "engine/model/gguf_reader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>

#include "engine/core/error.h"
#include "tests/support/gguf_builder.h"
#include "tests/support/test_paths.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

std::string write_gguf(const std::string& name, const std::string& bytes) {
  const std::string path = test::make_temp_dir("gguf") + "/" + name;
  test::write_file(path, bytes);
  return path;
}

// Expects open() to throw an Error whose message contains every fragment.
void expect_open_error(const std::string& path, const std::vector<std::string>& fragments) {
  try {
    GgufFile::open(path);
    FAIL() << "expected an error for " << path;
  } catch (const Error& e) {
    for (const auto& f : fragments) EXPECT_THAT(e.what(), HasSubstr(f));
  }
}

TEST(GgufReader, ReadsStories260kMetadataAndTensors) {
  const auto gguf =
      GgufFile::open(test::shared_path("models/stories260K/gguf/stories260K-q8_0.gguf"));
  EXPECT_EQ(gguf->version(), 3u);
  EXPECT_EQ(gguf->get_string("general.architecture"), "llama");
  EXPECT_EQ(gguf->get_int("llama.embedding_length"), 64);
  EXPECT_EQ(gguf->get_int("llama.block_count"), 5);
  EXPECT_EQ(gguf->get_string_array("tokenizer.ggml.tokens").size(), 512u);
  const GgufTensorInfo* q = gguf->find_tensor("blk.0.attn_q.weight");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->dtype, DType::Q8_0);
  EXPECT_EQ(q->shape, (std::vector<int64_t>{64, 64}));
  EXPECT_EQ(q->num_bytes, 64u * 2 * 34);
  EXPECT_EQ(gguf->find_tensor("blk.0.ffn_down.weight")->dtype, DType::F16);
  EXPECT_FALSE(gguf->get_string("tokenizer.chat_template").empty());
}

TEST(GgufReader, WrongTypeAndMissingKeyNameTheKey) {
  const auto gguf =
      GgufFile::open(test::shared_path("models/stories260K/gguf/stories260K-f32.gguf"));
  EXPECT_THROW(gguf->get_int("no.such.key"), Error);
  try {
    gguf->get_int("general.architecture");
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("general.architecture"));
  }
}

TEST(GgufReader, BadMagicIsRejected) {
  const std::string bytes =
      test::GgufBuilder().add_string("general.architecture", "llama").build("GGUX");
  expect_open_error(write_gguf("bad-magic.gguf", bytes), {"bad-magic.gguf", "bad magic"});
}

TEST(GgufReader, TensorOffsetPastTheEndNamesTheTensor) {
  const std::string bytes = test::GgufBuilder()
                                .add_f32_tensor("ok.weight", {4}, {1, 2, 3, 4})
                                .add_f32_tensor("far.weight", {4}, {1, 2, 3, 4}, 1 << 20)
                                .build();
  expect_open_error(write_gguf("offset.gguf", bytes),
                    {"offset.gguf", "far.weight", "past the end"});
}

TEST(GgufReader, TruncatedFileIsRejectedAtEveryCut) {
  const std::string full = test::GgufBuilder()
                               .add_string("general.architecture", "llama")
                               .add_string_array("tokenizer.ggml.tokens", {"a", "b", "c"})
                               .add_f32_tensor("t.weight", {2, 8}, std::vector<float>(16, 0.5f))
                               .build();
  // Every proper prefix must fail cleanly (never crash or read out of bounds).
  for (size_t cut = 0; cut < full.size(); cut += 7) {
    const std::string path = write_gguf("cut.gguf", full.substr(0, cut));
    EXPECT_THROW(GgufFile::open(path), Error) << "cut at " << cut;
  }
  EXPECT_NO_THROW(GgufFile::open(write_gguf("whole.gguf", full)));
}

TEST(GgufReader, HugeArrayCountIsRejectedWithoutAllocating) {
  std::string bytes = test::GgufBuilder().add_string_array("k", {"x"}).build();
  // Patch the array count (after magic, version, counts, key, type, element type) to 2^60.
  const size_t count_offset = 4 + 4 + 8 + 8 + 8 + 1 + 4 + 4;
  const uint64_t huge = uint64_t{1} << 60;
  std::memcpy(bytes.data() + count_offset, &huge, 8);
  expect_open_error(write_gguf("huge.gguf", bytes), {"k", "past the end"});
}

TEST(GgufReader, DuplicateTensorNamesAreRejected) {
  const std::string bytes = test::GgufBuilder()
                                .add_f32_tensor("t", {4}, {1, 2, 3, 4})
                                .add_f32_tensor("t", {4}, {1, 2, 3, 4})
                                .build();
  expect_open_error(write_gguf("dup.gguf", bytes), {"t", "twice"});
}

// Found with tests/fuzz's tensor property: 2^22 x 2^40 F32 elements are 2^64 bytes, which
// wrapped to 0 in 64 bits, so a tensor of 2^62 elements passed the size check with no data.
TEST(GgufReader, TensorWhoseByteCountOverflowsIsRejected) {
  const std::string bytes =
      test::GgufBuilder()
          .add_f32_tensor("huge.weight", {int64_t{1} << 22, int64_t{1} << 40}, {})
          .build();
  expect_open_error(write_gguf("overflow.gguf", bytes), {"overflow.gguf", "huge.weight"});
}

}  // namespace
}  // namespace sluice
