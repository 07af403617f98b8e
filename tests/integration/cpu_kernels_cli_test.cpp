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

// Q8_0 through the CPU's best kernels (on AVX-512 VNNI: tiles made at load) and through the AVX2
// ones (no tiles): the same bits, so the same ids, the reference's first 60.
TEST(CpuKernelsCli, QuantizedModelGeneratesTheSameIdsUnderTheAvx2Ceiling) {
  const auto expected = reference_generated_ids();
  std::vector<std::vector<int32_t>> ids;
  for (const std::string ceiling : {"native", "avx2"}) {
    SCOPED_TRACE(ceiling);
    const std::string dir = make_temp_dir("cpu-kernels");
    write_file(dir + "/input.jsonl", "{\"prompt\": \"Once upon a time\"}\n");
    const ProcessResult r =
        run_with_ceiling(ceiling, {"generate", "--model",
                                   shared_path("models/stories260K/gguf/stories260K-q8_0.gguf"),
                                   "--input", dir + "/input.jsonl", "--output", dir + "/out.jsonl",
                                   "--max-tokens", "60", "--token-ids", "--quiet"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto rows = read_jsonl(dir + "/out.jsonl");
    ASSERT_EQ(rows.size(), 1u);
    ids.push_back(rows[0]["output_token_ids"].get<std::vector<int32_t>>());
  }
  EXPECT_EQ(ids[0], std::vector<int32_t>(expected.begin(), expected.begin() + 60));
  EXPECT_EQ(ids[1], ids[0]);
}

}  // namespace
}  // namespace sluice::test
