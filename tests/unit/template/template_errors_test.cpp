// Errors: syntax errors name the line and column, runtime errors name where they happened,
// raise_exception's message comes through exactly, and no malformed template crashes or hangs
// the interpreter (every prefix and many corruptions of the real templates either compile or
// fail with sluice::Error, and render or fail with TemplateError).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "tests/support/test_paths.h"
#include "tests/unit/template/template_test_util.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

TEST(TemplateErrors, SyntaxErrorsNameLineAndColumn) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{{ x", "line 1, column 1: unexpected end of template: '{{' is never closed with '}}'"},
      {"a\n{% if x %}b",
       "line 2, column 1: unexpected end of template: the 'if' block opened here is never "
       "closed (expected 'elif' or 'else' or 'endif')"},
      {"line one\n  {% for %}",
       "line 2, column 10: expected a name, got end of statement block '%}'"},
      {"{% if x %}{% endfor %}",
       "line 1, column 14: unexpected 'endfor' tag: the 'if' block opened at line 1, column 1 "
       "expects 'elif' or 'else' or 'endif'"},
      {"{% endif %}", "line 1, column 4: unexpected 'endif' tag: no block is open"},
      {"{% frobnicate %}", "line 1, column 4: unknown tag 'frobnicate'"},
      {"{# unterminated", "line 1, column 1: missing end of comment tag"},
      {"{{ 'abc }}", "line 1, column 4: unterminated string literal"},
      {"{{ (1 }}", "line 1, column 7: unexpected '}', expected ')'"},
      {"{{ 1 + }}", "line 1, column 8: unexpected end of print statement '}}'"},
      {"{{ x | }}", "line 1, column 8: expected a filter name, got end of print statement '}}'"},
      {"{% break %}", "line 1, column 4: 'break' outside of a loop"},
      {"{% include 'x' %}", "line 1, column 4: the 'include' tag is not supported"},
      {"{% raw %}abc", "line 1, column 1: missing end of raw directive ({% endraw %})"},
      {"{{ 'a\\x4' }}", "line 1, column 6: truncated \\xXX escape"},
      {"{{ x $ y }}", "line 1, column 6: unexpected character '$'"},
      {"é\n{{ é }}", "line 2, column 4: unexpected character 'é'"},
      {"{{ f(a=1, 2) }}", "line 1, column 11: positional argument follows keyword argument"},
  };
  for (const auto& [source, message] : cases) {
    EXPECT_EQ(test::compile_error(source), "template syntax error at " + message) << source;
  }
}

TEST(TemplateErrors, RaiseExceptionMessageIsExact) {
  EXPECT_EQ(test::render_error("{{ raise_exception('Only user and assistant roles!') }}"),
            "Only user and assistant roles!");
  EXPECT_EQ(test::render_error("{% for i in [1] %}{% if true %}{{ raise_exception('x' ~ i) }}"
                               "{% endif %}{% endfor %}"),
            "x1");
  EXPECT_EQ(test::render_error("{% macro m() %}{{ raise_exception('from macro') }}{% endmacro %}"
                               "{{ m() }}"),
            "from macro");
}

TEST(TemplateErrors, RuntimeErrorsNameTheirPosition) {
  EXPECT_EQ(test::render_error("ok\n  {{ messages[0].content.x.y }}", R"({"messages": [{}]})"),
            "template error at line 2, column 25: 'dict object' has no attribute 'content'");
  EXPECT_EQ(test::render_error("{{ 1 }}{{ none() }}"),
            "template error at line 1, column 15: 'NoneType' object is not callable");
  EXPECT_EQ(test::render_error("{% for x in 5 %}{% endfor %}"),
            "template error at line 1, column 13: 'int' object is not iterable");
}

TEST(TemplateErrors, VariablesMustBeAnObject) {
  const ChatTemplate chat_template = ChatTemplate::compile("x");
  EXPECT_THROW(chat_template.render(nlohmann::ordered_json::array()), TemplateError);
}

TEST(TemplateErrors, DeepNestingFailsCleanly) {
  const std::string parentheses = std::string(5000, '(') + "1" + std::string(5000, ')');
  EXPECT_THAT(test::compile_error("{{ " + parentheses + " }}"), HasSubstr("nested too deeply"));
  std::string blocks;
  for (int i = 0; i < 1000; ++i) blocks += "{% if true %}";
  EXPECT_THAT(test::compile_error(blocks), HasSubstr("nested too deeply"));
  EXPECT_THAT(test::compile_error("{{ " + std::string(5000, '-') + "1 }}"),
              HasSubstr("nested too deeply"));
}

// Renders source if it compiles; returns false only if something other than the documented
// exceptions escaped (a crash would end the test binary instead).
bool compiles_and_renders_or_fails_cleanly(const std::string& source) {
  const nlohmann::ordered_json variables = {
      {"messages",
       {{{"role", "user"}, {"content", "Hi"}}, {{"role", "assistant"}, {"content", "Yo"}}}},
      {"tools", nullptr},
      {"add_generation_prompt", true},
      {"bos_token", "<s>"},
      {"eos_token", "</s>"}};
  try {
    const ChatTemplate chat_template = ChatTemplate::compile(source);
    chat_template.render(variables);
  } catch (const Error&) {
    // A syntax error (Error) or a render error (TemplateError, an Error) is the expected outcome.
  } catch (...) {
    return false;
  }
  return true;
}

std::vector<std::string> shared_template_sources() {
  std::vector<std::string> sources;
  for (const char* name : {"Qwen-Qwen2.5-7B-Instruct", "meta-llama-Llama-3.1-8B-Instruct",
                           "google-gemma-2-2b-it", "HuggingFaceH4-zephyr-7b-beta"}) {
    sources.push_back(test::read_file(
        test::shared_path(std::string("chat-templates/") + name + "/template.jinja")));
  }
  return sources;
}

TEST(TemplateErrors, EveryPrefixOfRealTemplatesFailsCleanly) {
  for (const std::string& source : shared_template_sources()) {
    for (size_t length = 0; length <= source.size(); ++length) {
      ASSERT_TRUE(compiles_and_renders_or_fails_cleanly(source.substr(0, length))) << length;
    }
  }
}

TEST(TemplateErrors, CorruptedRealTemplatesFailCleanly) {
  std::mt19937 random(12345);
  const std::string alphabet = "{}%#-+()[]'\"\\|.,:=~ \n\tabxz019é";
  for (const std::string& source : shared_template_sources()) {
    for (int trial = 0; trial < 300; ++trial) {
      std::string corrupted = source;
      const int num_edits = 1 + static_cast<int>(random() % 4);
      for (int edit = 0; edit < num_edits && !corrupted.empty(); ++edit) {
        const size_t at = random() % corrupted.size();
        const std::string piece(1, alphabet[random() % alphabet.size()]);
        switch (random() % 3) {
          case 0:
            corrupted.erase(at, 1 + random() % 8);
            break;
          case 1:
            corrupted.insert(at, piece);
            break;
          default:
            corrupted.replace(at, 1, piece);
            break;
        }
      }
      ASSERT_TRUE(compiles_and_renders_or_fails_cleanly(corrupted)) << corrupted;
    }
  }
}

}  // namespace
}  // namespace sluice
