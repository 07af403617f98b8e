// `sluice tokenize`, `sluice --version` and the headless demo.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/integration/cli_test_util.h"
#include "tests/integration/serve_process.h"
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
  EXPECT_THAT(r.out, HasSubstr("cpu: fixed-order fp32 kernels ("));
  EXPECT_THAT(r.out, HasSubstr("cpu quantized: 8-bit integer kernels ("));
  EXPECT_THAT(r.out, HasSubstr("gui: "));
  EXPECT_THAT(r.out, HasSubstr("mixture of experts: the CPU runs every layer's experts"));
  EXPECT_THAT(r.out, HasSubstr("qwen3moe, gpt-oss"));
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

// --endpoint without a display: the rows go to a `sluice serve` process, and come back as rows.
TEST(HeadlessDemo, GuiWithoutDisplaySendsTheRowsToAnEndpoint) {
  ServeProcess server;
  const auto r = run_process({"/usr/bin/env", "-u", "DISPLAY", "-u", "WAYLAND_DISPLAY", "-u",
                              "QT_QPA_PLATFORM", SLUICE_EXECUTABLE, "gui", "--endpoint",
                              server.url(), "--dataset",
                              source_dir() + "/resources/samples/story_prompts.jsonl", "--start"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 8);
  EXPECT_THAT(r.out, HasSubstr("\"id\":\"lily-park\""));
  EXPECT_THAT(r.out, HasSubstr("\"output_tokens\":"));
  EXPECT_THAT(r.err, HasSubstr(std::string("remote: model ") + kModel));
  const auto both = run_process({"/usr/bin/env", "-u", "DISPLAY", "-u", "WAYLAND_DISPLAY", "-u",
                                 "QT_QPA_PLATFORM", SLUICE_EXECUTABLE, "gui", "--endpoint",
                                 server.url(), "--model", "m.gguf", "--dataset", "d.jsonl"});
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_THAT(both.err, HasSubstr("takes no --model"));
}

TEST(HeadlessDemo, GuiWithoutDisplayHonoursTheDevice) {
  const auto r = run_process({"/usr/bin/env", "-u", "DISPLAY", "-u", "WAYLAND_DISPLAY", "-u", "QT_QPA_PLATFORM",
                              SLUICE_EXECUTABLE, "gui", "--model",
                              shared_path("models/stories260K/gguf/stories260K-f32.gguf"), "--dataset",
                              source_dir() + "/resources/samples/story_prompts.jsonl", "--device", "cuda:99"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("cuda:99"));
  EXPECT_EQ(r.out, "");
}

}  // namespace
}  // namespace sluice::test

namespace sluice::test {
namespace {

// render-template prints exactly what transformers renders (the shared expected files).
TEST(RenderTemplateCli, PrintsTheRenderedTextExactlyOrTheTemplateError) {
  const std::string base = shared_path("chat-templates/Qwen-Qwen2.5-7B-Instruct");
  const auto cases = nlohmann::json::parse(read_file(base + "/cases.json"));
  const std::string dir = make_temp_dir("render");
  int num_checked = 0;
  for (const auto& c : cases["cases"]) {
    const std::string name = c["name"];
    if (!std::filesystem::exists(base + "/expected/" + name + ".txt")) continue;
    write_file(dir + "/messages.json", c["messages"].dump());
    std::vector<std::string> args = {"render-template", "--template", base + "/template.jinja", "--messages",
                                     dir + "/messages.json"};
    if (c.value("add_generation_prompt", false)) args.push_back("--add-generation-prompt");
    for (const char* token : {"bos_token", "eos_token"}) {
      if (!c.contains(token) || !c[token].is_string()) continue;
      args.push_back(token == std::string("bos_token") ? "--bos-token" : "--eos-token");
      args.push_back(c[token]);
    }
    const auto r = run_sluice(args);
    ASSERT_EQ(r.exit_code, 0) << name << ": " << r.err;
    EXPECT_EQ(r.out, read_file(base + "/expected/" + name + ".txt")) << name;
    ++num_checked;
  }
  EXPECT_GE(num_checked, 5);
  const std::string gemma = shared_path("chat-templates/google-gemma-2-2b-it");
  const auto gemma_cases = nlohmann::json::parse(read_file(gemma + "/cases.json"));
  for (const auto& c : gemma_cases["cases"]) {
    if (c["name"] != "system_user") continue;
    write_file(dir + "/messages.json", c["messages"].dump());
    const auto r = run_sluice({"render-template", "--template", gemma + "/template.jinja", "--messages",
                               dir + "/messages.json"});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_THAT(r.err, HasSubstr(read_file(gemma + "/expected/system_user.error.txt").substr(0, 20)));
  }
}

}  // namespace
}  // namespace sluice::test
