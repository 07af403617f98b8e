// `sluice gui` driven by a script (offscreen): a --job that does not exist is created, and every
// failure prints its reason and exits non-zero. Built only with the GUI (SLUICE_GUI).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/integration/cli_test_util.h"

namespace sluice::test {
namespace {

using ::testing::HasSubstr;

// Runs `sluice args` offscreen with its settings and data in a fresh folder, so a test neither
// reads nor writes the user's.
ProcessResult run_gui(const std::vector<std::string>& args) {
  const std::string home = make_temp_dir("gui-script-home");
  std::vector<std::string> argv = {SLUICE_EXECUTABLE};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_process(argv, {"QT_QPA_PLATFORM=offscreen", "XDG_CONFIG_HOME=" + home + "/config",
                            "XDG_DATA_HOME=" + home + "/data"});
}

bool has_gui() {
  return run_sluice({"--version"}).out.find("gui: yes") != std::string::npos;
}

std::string model_path() {
  return shared_path("models/stories260K/gguf/stories260K-f32.gguf");
}

std::string story_prompts() {
  return source_dir() + "/resources/samples/story_prompts.jsonl";
}

TEST(ScriptedGui, CreatesAJobFileThatDoesNotExistYet) {
  ASSERT_TRUE(has_gui()) << "sluice --version does not say \"gui: yes\"";
  const std::string job = make_temp_dir("gui-script") + "/new.sluicejob";
  const auto r = run_gui({"gui", "--model", model_path(), "--dataset", story_prompts(), "--job",
                          job, "--start", "--quit-when-done"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::filesystem::exists(job));
}

TEST(ScriptedGui, AFailedModelLoadSaysWhyAndExitsOne) {
  ASSERT_TRUE(has_gui()) << "sluice --version does not say \"gui: yes\"";
  const auto r = run_gui({"gui", "--model", "/nonexistent/model.gguf", "--dataset", story_prompts(),
                          "--start", "--quit-when-done"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("/nonexistent/model.gguf"));
}

TEST(ScriptedGui, AFailedRunSaysWhyAndExitsOne) {
  ASSERT_TRUE(has_gui()) << "sluice --version does not say \"gui: yes\"";
  const std::string dir = make_temp_dir("gui-script");
  const std::string input = write_input_jsonl(dir, "{\"instruction\": \"a\"}\nnot json\n");
  // A new job whose bad row stops it (the Instructions panel's default policy).
  const auto r = run_gui({"gui", "--model", model_path(), "--dataset", input, "--job",
                          dir + "/bad.sluicejob", "--start", "--quit-when-done"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("input.jsonl:2"));
}

TEST(ScriptedGui, StartWithNothingToRunIsAUsageError) {
  ASSERT_TRUE(has_gui()) << "sluice --version does not say \"gui: yes\"";
  const auto r = run_gui({"gui", "--model", model_path(), "--start", "--quit-when-done"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--dataset"));
  const std::string missing = make_temp_dir("gui-script") + "/missing.sluicejob";
  const auto job = run_gui({"gui", "--job", missing, "--start", "--quit-when-done"});
  EXPECT_EQ(job.exit_code, 2);
  EXPECT_THAT(job.err, HasSubstr("missing.sluicejob"));
}

TEST(ScriptedGui, AnUnknownTabIsAUsageErrorNamingTheTabs) {
  ASSERT_TRUE(has_gui()) << "sluice --version does not say \"gui: yes\"";
  const auto r = run_gui({"gui", "--tab", "nope", "--quit-when-done"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--tab expects one of live, kv-blocks, timeline, results, pairs"));
  EXPECT_THAT(r.err, HasSubstr("'nope'"));
}

}  // namespace
}  // namespace sluice::test
