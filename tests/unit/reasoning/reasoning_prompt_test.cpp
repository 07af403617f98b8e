// A thinking model's controls on its prompt (engine/reasoning/reasoning_prompt.h), checked against
// the renders transformers made of the real templates in ../shared/chat-templates: the variables
// the controls set render what the template's own cases render, and where a template does not
// read them, the adjusted text is the form that template (or its family) writes itself.
#include <gtest/gtest.h>

#include <ctime>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/core/error.h"
#include "engine/reasoning/reasoning_prompt.h"
#include "engine/template/chat_template.h"
#include "tests/support/test_paths.h"

namespace sluice {
namespace {

std::string render_of(const std::string& dir, const std::string& name) {
  return test::read_file(test::shared_path("chat-templates/" + dir + "/expected/" + name + ".txt"));
}

std::string template_of(const std::string& dir) {
  return test::read_file(test::shared_path("chat-templates/" + dir + "/template.jinja"));
}

// The case's conversation rendered with the controls' variables.
std::string render_with(const std::string& dir, const std::string& case_name,
                        const ReasoningControls& controls) {
  const std::string source = template_of(dir);
  const auto cases = nlohmann::ordered_json::parse(
      test::read_file(test::shared_path("chat-templates/" + dir + "/cases.json")));
  for (const auto& c : cases.at("cases")) {
    if (c.at("name") != case_name) continue;
    nlohmann::ordered_json variables = {{"messages", c.at("messages")},
                                        {"tools", nullptr},
                                        {"documents", nullptr},
                                        {"add_generation_prompt", c.at("add_generation_prompt")}};
    for (const char* token : {"bos_token", "eos_token"}) {
      if (c.contains(token) && !c.at(token).is_null()) variables[token] = c.at(token);
    }
    add_reasoning_variables(controls, source, variables);
    RenderOptions options;
    if (c.contains("clock")) {  // the gpt-oss cases' frozen clock: 2026-01-15T12:00:00
      EXPECT_EQ(c.at("clock").at("frozen_now"), "2026-01-15T12:00:00");
      options.now = std::tm{.tm_hour = 12, .tm_mday = 15, .tm_mon = 0, .tm_year = 126};
    }
    return ChatTemplate::compile(source).render(variables, options);
  }
  ADD_FAILURE() << "no case " << case_name << " in " << dir;
  return "";
}

TEST(ReasoningVariables, ThinkingOffRendersWhatTheTemplatesOwnCaseRenders) {
  for (const char* dir : {"Qwen-Qwen3-0.6B", "Qwen3.5-4B", "google-gemma-4-31B-it",
                          "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B"}) {
    SCOPED_TRACE(dir);
    EXPECT_EQ(render_with(dir, "thinking_off", ReasoningControls{.thinking = false}),
              render_of(dir, "thinking_off"));
    EXPECT_EQ(render_with(dir, "thinking_on", ReasoningControls{.thinking = true}),
              render_of(dir, "thinking_on"));
  }
}

TEST(ReasoningVariables, EffortRendersGptOssReasoningLine) {
  EXPECT_EQ(render_with("openai-gpt-oss-120b", "effort_low", ReasoningControls{.effort = "low"}),
            render_of("openai-gpt-oss-120b", "effort_low"));
  EXPECT_EQ(render_with("openai-gpt-oss-120b", "effort_high", ReasoningControls{.effort = "high"}),
            render_of("openai-gpt-oss-120b", "effort_high"));
}

// A past assistant turn's reasoning (ChatMessage::reasoning) reaches each family's template under
// the name it reads: the reasoning_history cases (the templates drop it before a later user turn)
// and the reasoning_last cases (they render it) come out as transformers rendered them.
TEST(ReasoningVariables, APastTurnsReasoningRendersWhereTheFamilyPutsIt) {
  // (Gemma 4's only case with a past reasoning has tool calls, which a ChatMessage does not hold.)
  for (const char* dir : {"Qwen-Qwen3-0.6B", "Qwen3.5-4B", "openai-gpt-oss-120b"}) {
    SCOPED_TRACE(dir);
    const auto cases = nlohmann::ordered_json::parse(
        test::read_file(test::shared_path(std::string("chat-templates/") + dir + "/cases.json")));
    bool found = false;
    for (const auto& c : cases.at("cases")) {
      const std::string case_name = c.at("name");
      if (case_name != "reasoning_history" && case_name != "reasoning_last") continue;
      found = true;
      Conversation conversation;
      int num_with_reasoning = 0;
      for (const auto& m : c.at("messages")) {
        ChatMessage message{m.at("role"), m.at("content"), ""};
        for (const char* key : {"reasoning_content", "reasoning", "thinking"}) {
          if (m.contains(key)) message.reasoning = m.at(key);
        }
        num_with_reasoning += message.reasoning.empty() ? 0 : 1;
        conversation.push_back(std::move(message));
      }
      EXPECT_EQ(num_with_reasoning, 1);
      const auto token = [&](const char* name) {
        return c.contains(name) && c.at(name).is_string() ? c.at(name).get<std::string>() : "";
      };
      nlohmann::ordered_json variables = chat_variables(conversation, c.at("add_generation_prompt"),
                                                        token("bos_token"), token("eos_token"));
      for (const char* name : {"bos_token", "eos_token"}) {
        if (!c.contains(name) || c.at(name).is_null()) variables.erase(name);
      }
      RenderOptions options;
      if (c.contains("clock"))  // the gpt-oss cases' frozen clock: 2026-01-15T12:00:00
        options.now = std::tm{.tm_hour = 12, .tm_mday = 15, .tm_mon = 0, .tm_year = 126};
      EXPECT_EQ(ChatTemplate::compile(template_of(dir)).render(variables, options),
                render_of(dir, case_name))
          << case_name;
    }
    EXPECT_TRUE(found);
  }
}

TEST(ReasoningVariables, ThinkingIsSetOnlyForTemplatesThatReadIt) {
  nlohmann::ordered_json variables = nlohmann::ordered_json::object();
  add_reasoning_variables(ReasoningControls{.thinking = true}, "{{ message.thinking }}", variables);
  EXPECT_EQ(variables, (nlohmann::ordered_json{{"enable_thinking", true}}));
  variables = nlohmann::ordered_json::object();
  add_reasoning_variables(ReasoningControls{.thinking = false},
                          "{% if thinking %}<think>{% endif %}", variables);
  EXPECT_EQ(variables, (nlohmann::ordered_json{{"enable_thinking", false}, {"thinking", false}}));
}

TEST(ReasoningStart, ReadFromTheRenders) {
  EXPECT_EQ(
      reasoning_start(ReasoningFormat::ThinkTags, render_of("Qwen-Qwen3-0.6B", "thinking_on")),
      ReasoningStart::ModelOpens);
  EXPECT_EQ(
      reasoning_start(ReasoningFormat::ThinkTags, render_of("Qwen-Qwen3-0.6B", "thinking_off")),
      ReasoningStart::Closed);
  EXPECT_EQ(reasoning_start(ReasoningFormat::ThinkTags, render_of("Qwen3.5-4B", "thinking_on")),
            ReasoningStart::Open);
  EXPECT_EQ(reasoning_start(ReasoningFormat::ThinkTags,
                            render_of("deepseek-ai-DeepSeek-R1-Distill-Qwen-32B", "single_user")),
            ReasoningStart::Closed);
  EXPECT_EQ(reasoning_start(ReasoningFormat::ThoughtChannel,
                            render_of("google-gemma-4-31B-it", "thinking_on")),
            ReasoningStart::ModelOpens);
  EXPECT_EQ(reasoning_start(ReasoningFormat::ThoughtChannel,
                            render_of("google-gemma-4-31B-it", "thinking_off")),
            ReasoningStart::Closed);
  EXPECT_EQ(
      reasoning_start(ReasoningFormat::Harmony, render_of("openai-gpt-oss-120b", "single_user")),
      ReasoningStart::ModelOpens);
  EXPECT_EQ(reasoning_start(ReasoningFormat::None, "<think>\n"), ReasoningStart::Closed);
}

// A template that ignores the controls: the prompt is adjusted to the family's own form.
TEST(ApplyReasoningControls, ThinkingOffWritesTheFamilysClosedBlock) {
  // Qwen3: the model would open the block; off writes the empty block its template writes.
  std::string qwen3 = render_of("Qwen-Qwen3-0.6B", "thinking_on");
  ReasoningParams params =
      apply_reasoning_controls(ReasoningFormat::ThinkTags, {.thinking = false}, false, qwen3);
  EXPECT_EQ(qwen3, render_of("Qwen-Qwen3-0.6B", "thinking_off"));
  EXPECT_FALSE(params.starts_in_reasoning);
  EXPECT_EQ(params.format, ReasoningFormat::ThinkTags);
  // Qwen3.5: the prompt opened the block; off closes it as Qwen3.5's template does.
  std::string qwen35 = render_of("Qwen3.5-4B", "thinking_on");
  params = apply_reasoning_controls(ReasoningFormat::ThinkTags, {.thinking = false}, false, qwen35);
  EXPECT_EQ(qwen35, render_of("Qwen3.5-4B", "thinking_off"));
  EXPECT_FALSE(params.starts_in_reasoning);
  // gpt-oss cannot switch reasoning off in its template: the final channel is opened.
  std::string gpt_oss = render_of("openai-gpt-oss-120b", "single_user");
  params = apply_reasoning_controls(ReasoningFormat::Harmony, {.thinking = false}, false, gpt_oss);
  EXPECT_EQ(gpt_oss,
            render_of("openai-gpt-oss-120b", "single_user") + "<|channel|>final<|message|>");
  EXPECT_FALSE(params.starts_in_reasoning);
  // A budget of 0 is thinking off.
  std::string zero = render_of("Qwen3.5-4B", "thinking_on");
  params = apply_reasoning_controls(ReasoningFormat::ThinkTags, {.budget = 0}, false, zero);
  EXPECT_EQ(zero, render_of("Qwen3.5-4B", "thinking_off"));
  EXPECT_EQ(params.budget, -1);
}

TEST(ApplyReasoningControls, ThinkingOnReopensAnEmptyBlock) {
  // The R1 distill's template closes an empty block unless enable_thinking is set.
  std::string r1 = render_of("deepseek-ai-DeepSeek-R1-Distill-Qwen-32B", "thinking_off");
  const ReasoningParams params =
      apply_reasoning_controls(ReasoningFormat::ThinkTags, {.thinking = true}, false, r1);
  EXPECT_EQ(r1, render_of("deepseek-ai-DeepSeek-R1-Distill-Qwen-32B", "thinking_on"));
  EXPECT_TRUE(params.starts_in_reasoning);
  // A past turn's block with text in it is not reopened.
  std::string past = "<think>\nI thought.\n</think>";
  apply_reasoning_controls(ReasoningFormat::ThinkTags, {.thinking = true}, false, past);
  EXPECT_EQ(past, "<think>\nI thought.\n</think>");
}

TEST(ApplyReasoningControls, AConstrainedAnswerOpensTheBlockForFreeReasoning) {
  std::string qwen3 = render_of("Qwen-Qwen3-0.6B", "thinking_on");
  ReasoningParams params = apply_reasoning_controls(ReasoningFormat::ThinkTags, {}, true, qwen3);
  EXPECT_EQ(qwen3, render_of("Qwen-Qwen3-0.6B", "thinking_on") + "<think>\n");
  EXPECT_TRUE(params.starts_in_reasoning);
  std::string gpt_oss = render_of("openai-gpt-oss-120b", "single_user");
  params = apply_reasoning_controls(ReasoningFormat::Harmony, {.budget = 32}, true, gpt_oss);
  EXPECT_TRUE(gpt_oss.ends_with("<|start|>assistant<|channel|>analysis<|message|>"));
  EXPECT_TRUE(params.starts_in_reasoning);
  EXPECT_EQ(params.budget, 32);
  // Thinking off with a grammar: the answer comes at once, constrained from its first token.
  std::string off = render_of("Qwen-Qwen3-0.6B", "thinking_off");
  params = apply_reasoning_controls(ReasoningFormat::ThinkTags, {.thinking = false}, true, off);
  EXPECT_EQ(off, render_of("Qwen-Qwen3-0.6B", "thinking_off"));
  EXPECT_FALSE(params.starts_in_reasoning);
  // Applied again to its own result, nothing changes (a resumed job's stored prompt).
  std::string again = qwen3;
  apply_reasoning_controls(ReasoningFormat::ThinkTags, {}, true, again);
  EXPECT_EQ(again, qwen3);
}

TEST(ApplyReasoningControls, NoFormatLeavesThePromptAlone) {
  std::string prompt = "<s>[INST] Hi [/INST]";
  const ReasoningParams params =
      apply_reasoning_controls(ReasoningFormat::None, {.thinking = false}, true, prompt);
  EXPECT_EQ(prompt, "<s>[INST] Hi [/INST]");
  EXPECT_EQ(params.format, ReasoningFormat::None);
  EXPECT_FALSE(params.starts_in_reasoning);
}

TEST(ValidateReasoningControls, NamesTheBadControl) {
  EXPECT_THROW(validate_reasoning_controls({.effort = "extreme"}), Error);
  EXPECT_THROW(validate_reasoning_controls({.budget = -2}), Error);
  EXPECT_NO_THROW(validate_reasoning_controls({.effort = "medium", .budget = 0}));
  try {
    validate_reasoning_controls({.effort = "extreme"});
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("extreme"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace sluice
