// `sluice tokenize`, `sluice --version` and the headless demo.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/integration/cli_test_util.h"
#include "tests/support/reference_data.h"

namespace sluice::test {
namespace {

using ::testing::HasSubstr;

std::string ids_line(const std::vector<int32_t>& ids) {
  std::string line;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i > 0) line += ' ';
    line += std::to_string(ids[i]);
  }
  return line + "\n";
}

TEST(TokenizeCli, EveryFormGivesTheReferencePromptIds) {
  for (const auto& form : stories260k_forms()) {
    const auto r =
        run_sluice({"tokenize", "--model", shared_path(form.path), "--text", "Once upon a time"});
    ASSERT_EQ(r.exit_code, 0) << form.name << ": " << r.err;
    EXPECT_EQ(r.out, ids_line(reference_prompt_ids())) << form.name;
  }
}

TEST(TokenizeCli, WorksOnVocabOnlyGgufAndHonoursNoBos) {
  // "Hello world" in the GPT-2 vocabulary: ids from llama.cpp's test file (line 11 of the .out).
  const auto r = run_sluice({"tokenize", "--model",
                             shared_path("tokenizers/llamacpp-vocab/ggml-vocab-gpt-2.gguf"),
                             "--text", "Hello world", "--no-bos"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "15496 995\n");
  const auto no_bos = run_sluice({"tokenize", "--model", shared_path("models/stories260K/hf"),
                                  "--text", "Once upon a time", "--no-bos"});
  const auto prompt = reference_prompt_ids();
  EXPECT_EQ(no_bos.out, ids_line(std::vector<int32_t>(prompt.begin() + 1, prompt.end())));
}

TEST(TokenizeCli, MissingModelIsAnError) {
  const auto r = run_sluice({"tokenize", "--model", "/nonexistent.gguf", "--text", "x"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("/nonexistent.gguf"));
}

TEST(VersionCli, PrintsVersionAndFeatures) {
  const auto r = run_sluice({"--version"});
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.out, HasSubstr("sluice 0."));
  EXPECT_THAT(r.out, HasSubstr("cuda: "));
  EXPECT_THAT(r.out, HasSubstr("blas: OpenBLAS"));
  EXPECT_THAT(r.out, HasSubstr("gui: "));
}

TEST(HeadlessDemo, GuiWithoutDisplayRunsTheJobAndPrintsRows) {
  std::vector<std::string> argv = {
      SLUICE_EXECUTABLE, "gui",
      "--model",         shared_path("models/stories260K/gguf/stories260K-f32.gguf"),
      "--dataset",       source_dir() + "/resources/samples/story_prompts.jsonl",
      "--start"};
  // No DISPLAY, WAYLAND_DISPLAY or QT_QPA_PLATFORM: the headless path.
  const auto r = run_process({"/usr/bin/env", "-u", "DISPLAY", "-u", "WAYLAND_DISPLAY", "-u",
                              "QT_QPA_PLATFORM", argv[0], argv[1], argv[2], argv[3], argv[4],
                              argv[5], argv[6]});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto num_rows = std::count(r.out.begin(), r.out.end(), '\n');
  EXPECT_EQ(num_rows, 8);
  EXPECT_THAT(r.out, HasSubstr("\"id\":\"lily-park\""));
  EXPECT_THAT(r.err, HasSubstr("headless"));
}

}  // namespace
}  // namespace sluice::test
