// Every conversation in ../shared/chat-templates renders byte-identical to what Hugging Face
// transformers produced (expected/<case>.txt), or raises exactly the message transformers
// raised (expected/<case>.error.txt). Variables are passed the way those files were made:
// messages, tools=None, documents=None, add_generation_prompt, each special token unless it is
// null (then it is undefined in the template), the case's own variables (enable_thinking,
// reasoning_effort, tools, ...) and its frozen clock for strftime_now.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/template/chat_template.h"
#include "tests/support/test_paths.h"

namespace sluice {
namespace {

const std::vector<std::string> kTemplates = {
    "HuggingFaceH4-zephyr-7b-beta",
    "Qwen-Qwen2.5-7B-Instruct",
    "Qwen-Qwen3-0.6B",
    "Qwen3.5-4B",
    "chatml-teknium-OpenHermes-2.5-Mistral-7B",
    "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B",
    "google-gemma-2-2b-it",
    "google-gemma-4-31B-it",
    "llama-2-chat",
    "meta-llama-Llama-3.1-8B-Instruct",
    "microsoft-Phi-3.5-mini-instruct",
    "mistralai-Mistral-7B-Instruct-v0.2",
    "openai-gpt-oss-120b",
    "stories260K-plain",
};

nlohmann::ordered_json case_variables(const nlohmann::ordered_json& test_case) {
  nlohmann::ordered_json variables = {
      {"messages", test_case.at("messages")},
      {"tools", nullptr},
      {"documents", nullptr},
      {"add_generation_prompt", test_case.at("add_generation_prompt")}};
  for (const char* token : {"bos_token", "eos_token"}) {
    if (test_case.contains(token) && !test_case.at(token).is_null()) {
      variables[token] = test_case.at(token);
    }
  }
  // The template variables a case sets (enable_thinking, reasoning_effort, tools, ...).
  if (test_case.contains("variables")) {
    for (const auto& [name, value] : test_case.at("variables").items()) variables[name] = value;
  }
  return variables;
}

// The frozen clock of a case ("clock": {"frozen_now": "2026-01-15T12:00:00"}) for strftime_now.
RenderOptions case_render_options(const nlohmann::ordered_json& test_case) {
  RenderOptions options;
  if (test_case.contains("clock") && !test_case.at("clock").is_null()) {
    const std::string frozen = test_case.at("clock").at("frozen_now").get<std::string>();
    std::tm now{};
    if (std::sscanf(frozen.c_str(), "%d-%d-%dT%d:%d:%d", &now.tm_year, &now.tm_mon, &now.tm_mday,
                    &now.tm_hour, &now.tm_min, &now.tm_sec) != 6) {
      ADD_FAILURE() << "unreadable frozen_now " << frozen;
    }
    now.tm_year -= 1900;
    now.tm_mon -= 1;
    std::tm normalized = now;
    std::mktime(&normalized);  // fills the weekday and the day of the year
    now.tm_wday = normalized.tm_wday;
    now.tm_yday = normalized.tm_yday;
    options.now = now;
  }
  return options;
}

class SharedChatTemplateCases : public ::testing::TestWithParam<std::string> {};

TEST_P(SharedChatTemplateCases, RenderLikeTransformers) {
  const std::string dir = test::shared_path("chat-templates/" + GetParam());
  const ChatTemplate chat_template =
      ChatTemplate::compile(test::read_file(dir + "/template.jinja"));
  const auto cases = nlohmann::ordered_json::parse(test::read_file(dir + "/cases.json"));
  ASSERT_FALSE(cases.at("cases").empty());
  int num_checked = 0;
  for (const auto& test_case : cases.at("cases")) {
    const std::string name = test_case.at("name").get<std::string>();
    SCOPED_TRACE(GetParam() + " / " + name);
    const std::string expected_path = dir + "/expected/" + name + ".txt";
    const std::string error_path = dir + "/expected/" + name + ".error.txt";
    const nlohmann::ordered_json variables = case_variables(test_case);
    const RenderOptions options = case_render_options(test_case);
    if (std::filesystem::exists(error_path)) {
      const std::string expected_error = test::read_file(error_path);
      try {
        const std::string text = chat_template.render(variables, options);
        ADD_FAILURE() << "rendered instead of raising: " << text;
      } catch (const TemplateError& error) {
        EXPECT_EQ(error.what(), expected_error);
      }
    } else {
      EXPECT_EQ(chat_template.render(variables, options), test::read_file(expected_path));
    }
    ++num_checked;
  }
  EXPECT_EQ(num_checked, static_cast<int>(cases.at("cases").size()));
}

// The render limits (render_budget.h, RenderOptions) leave real templates far more room than
// long conversations need: 2000 turns of 2 KiB each.
TEST_P(SharedChatTemplateCases, RenderLongConversationsWithinTheLimits) {
  const std::string dir = test::shared_path("chat-templates/" + GetParam());
  const ChatTemplate chat_template =
      ChatTemplate::compile(test::read_file(dir + "/template.jinja"));
  nlohmann::ordered_json messages = nlohmann::ordered_json::array();
  for (int i = 0; i < 2000; ++i) {
    const std::string content = "turn " + std::to_string(i) + " " + std::string(2048, 'w');
    messages.push_back({{"role", i % 2 == 0 ? "user" : "assistant"}, {"content", content}});
  }
  const nlohmann::ordered_json variables = {{"messages", messages}, {"tools", nullptr},
                                            {"documents", nullptr}, {"add_generation_prompt", true},
                                            {"bos_token", "<s>"},   {"eos_token", "</s>"}};
  const std::string text = chat_template.render(variables);
  EXPECT_GT(text.size(), size_t{2000} * 2048);
  EXPECT_NE(text.find("turn 1999 w"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(AllTemplates, SharedChatTemplateCases, ::testing::ValuesIn(kTemplates),
                         [](const ::testing::TestParamInfo<std::string>& param_info) {
                           std::string name = param_info.param;
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

// The directory holds exactly the templates above, so a template added to shared/ is not
// silently left untested.
TEST(SharedChatTemplateCases, CoverEveryTemplateDirectory) {
  std::vector<std::string> found;
  for (const auto& entry :
       std::filesystem::directory_iterator(test::shared_path("chat-templates"))) {
    if (entry.is_directory()) found.push_back(entry.path().filename().string());
  }
  std::sort(found.begin(), found.end());
  std::vector<std::string> expected = kTemplates;
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(found, expected);
}

}  // namespace
}  // namespace sluice
