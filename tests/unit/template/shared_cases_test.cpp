// Every conversation in ../shared/chat-templates renders byte-identical to what Hugging Face
// transformers produced (expected/<case>.txt), or raises exactly the message transformers
// raised (expected/<case>.error.txt). Variables are passed the way those files were made:
// messages, tools=None, documents=None, add_generation_prompt, and each special token unless
// it is null (then it is undefined in the template).
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
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
    "chatml-teknium-OpenHermes-2.5-Mistral-7B",
    "google-gemma-2-2b-it",
    "llama-2-chat",
    "meta-llama-Llama-3.1-8B-Instruct",
    "microsoft-Phi-3.5-mini-instruct",
    "mistralai-Mistral-7B-Instruct-v0.2",
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
  return variables;
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
    if (std::filesystem::exists(error_path)) {
      const std::string expected_error = test::read_file(error_path);
      try {
        const std::string text = chat_template.render(variables);
        ADD_FAILURE() << "rendered instead of raising: " << text;
      } catch (const TemplateError& error) {
        EXPECT_EQ(error.what(), expected_error);
      }
    } else {
      EXPECT_EQ(chat_template.render(variables), test::read_file(expected_path));
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
