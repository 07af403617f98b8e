// SLUICE_CPU_KERNELS (engine/backend/cpu/cpu_kernel_ceiling.h) end to end: `sluice version` names
// the kernels a capped process uses, a value it does not take is reported, and a quantized model
// generates the same ids under the AVX2 ceiling as with the CPU's best kernels.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/integration/cli_test_util.h"
#include "tests/support/reference_data.h"

namespace sluice::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

ProcessResult run_with_ceiling(const std::string& value, std::vector<std::string> args) {
  args.insert(args.begin(), SLUICE_EXECUTABLE);
  return run_process(args, {"QT_QPA_PLATFORM=offscreen", "SLUICE_CPU_KERNELS=" + value});
}

TEST(CpuKernelsCli, VersionNamesTheCappedKernels) {
  const ProcessResult native = run_sluice({"--version"});
  ASSERT_EQ(native.exit_code, 0) << native.err;
  const ProcessResult portable = run_with_ceiling("portable", {"--version"});
  ASSERT_EQ(portable.exit_code, 0) << portable.err;
  EXPECT_THAT(portable.out, HasSubstr("cpu: fixed-order fp32 kernels (portable C++)"));
  EXPECT_THAT(portable.out, HasSubstr("cpu quantized: 8-bit integer kernels (scalar)"));
  const ProcessResult avx2 = run_with_ceiling("avx2", {"--version"});
  ASSERT_EQ(avx2.exit_code, 0) << avx2.err;
  EXPECT_THAT(avx2.out, Not(HasSubstr("AVX-512")));
  // A CPU with AVX2 or more keeps AVX2 under the ceiling; one without keeps what it has.
  if (native.out.find("AVX") != std::string::npos) {
    EXPECT_THAT(avx2.out, HasSubstr("cpu: fixed-order fp32 kernels (AVX2 + FMA, x86-64-v3)"));
    EXPECT_THAT(avx2.out, HasSubstr("cpu quantized: 8-bit integer kernels (AVX2)"));
  } else {
    EXPECT_EQ(avx2.out, native.out);
  }
}

TEST(CpuKernelsCli, AValueItDoesNotTakeIsReported) {
  const ProcessResult r = run_with_ceiling("avx-2", {"--version"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("SLUICE_CPU_KERNELS=avx-2 is not one of native, avx2, portable"));
  EXPECT_EQ(r.out, run_sluice({"--version"}).out);
}

// The ids `sluice generate` gives for "Once upon a time" under a ceiling.
std::vector<int32_t> generated_ids(const std::string& ceiling, const std::string& model,
                                   int max_tokens) {
  const std::string dir = make_temp_dir("cpu-kernels");
  write_file(dir + "/input.jsonl", "{\"prompt\": \"Once upon a time\"}\n");
  const ProcessResult r = run_with_ceiling(
      ceiling, {"generate", "--model", model, "--input", dir + "/input.jsonl", "--output",
                dir + "/out.jsonl", "--max-tokens", std::to_string(max_tokens), "--token-ids",
                "--ignore-eos", "--quiet"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const auto rows = read_jsonl(dir + "/out.jsonl");
  if (rows.size() != 1u) {
    ADD_FAILURE() << ceiling << ": " << rows.size() << " rows";
    return {};
  }
  return rows[0]["output_token_ids"].get<std::vector<int32_t>>();
}

// Q8_0 through the CPU's best tile kernels and through the AVX2 ones: the same bits, so the same
// ids, the reference's first 60.
TEST(CpuKernelsCli, QuantizedModelGeneratesTheSameIdsUnderTheAvx2Ceiling) {
  const auto expected = reference_generated_ids();
  const std::string model = shared_path("models/stories260K/gguf/stories260K-q8_0.gguf");
  const std::vector<int32_t> native = generated_ids("native", model, 60);
  EXPECT_EQ(native, std::vector<int32_t>(expected.begin(), expected.begin() + 60));
  EXPECT_EQ(generated_ids("avx2", model, 60), native);
}

// Q4_K_M (Q4_K and Q6_K matrices of 256 and 512 columns): tiles made at load under both
// ceilings, multiplied by the CPU's best tile kernels and by the AVX2 ones; the same ids.
TEST(CpuKernelsCli, KQuantModelGeneratesTheSameIdsFromAvx2Tiles) {
  const std::string model = shared_path("models/tiny-arch/llama-q/gguf/llama-q-Q4_K_M.gguf");
  if (run_sluice({"--version"}).out.find("AVX") != std::string::npos) {
    const ProcessResult avx2 = run_with_ceiling("avx2", {"--version"});
    EXPECT_THAT(avx2.out,
                HasSubstr("the layer matrices of Q8_0, Q4_K, Q6_K copied into interleaved tiles"));
  }
  const std::vector<int32_t> native = generated_ids("native", model, 40);
  EXPECT_EQ(native.size(), 40u);
  EXPECT_EQ(generated_ids("avx2", model, 40), native);
}

}  // namespace
}  // namespace sluice::test
