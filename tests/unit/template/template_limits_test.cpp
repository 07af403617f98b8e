// A chat template comes with a downloaded model, so a hostile or broken one must fail with a
// clear error instead of overflowing the stack, exhausting memory, leaking or hanging. These
// check each bound, and that ordinary large templates stay well inside them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "tests/unit/template/template_test_util.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

std::string repeat(const std::string& text, int times) {
  std::string out;
  for (int i = 0; i < times; ++i) out += text;
  return out;
}

TEST(TemplateLimits, LongOperatorChainsFailToCompile) {
  EXPECT_THAT(test::compile_error("{{ " + repeat("1 + ", 5000) + "1 }}"),
              HasSubstr("expression too long"));
  EXPECT_THAT(test::compile_error("{{ x" + repeat(".a", 5000) + " }}"),
              HasSubstr("expression too long"));
  EXPECT_THAT(test::compile_error("{{ x" + repeat("|trim", 5000) + " }}"),
              HasSubstr("expression too long"));
  // Chains inside nested parentheses count together.
  std::string nested = "1";
  for (int i = 0; i < 60; ++i) nested = "(" + nested + repeat(" + 1", 50) + ")";
  EXPECT_THAT(test::compile_error("{{ " + nested + " }}"), HasSubstr("expression too long"));
}

TEST(TemplateLimits, LargeOrdinaryTemplatesCompile) {
  std::string dict = "{{ {";
  for (int i = 0; i < 1500; ++i)
    dict += "'k" + std::to_string(i) + "': " + std::to_string(i) + ", ";
  dict += "}|length }}";
  EXPECT_EQ(test::render_text(dict), "1500");
  EXPECT_EQ(test::render_text("{{ " + repeat("1 + ", 500) + "1 }}"), "501");
  std::string statements;
  for (int i = 0; i < 5000; ++i) statements += "{% if true %}x{% endif %}";
  EXPECT_EQ(test::render_text(statements), std::string(5000, 'x'));
}

TEST(TemplateLimits, ValuesNestTooDeeplyFailCleanly) {
  EXPECT_THAT(test::render_error("{% set ns = namespace(x=[]) %}{% for i in range(5000) %}"
                                 "{% set ns.x = [ns.x] %}{% endfor %}{{ ns.x|length }}"),
              HasSubstr("nested more than 1000 levels deep"));
}

TEST(TemplateLimits, SelfReferencingNamespaceFailsToPrintAndIsFreed) {
  // Run under AddressSanitizer, a leaked cycle would fail this test at exit.
  EXPECT_THAT(test::render_error("{% set ns = namespace() %}{% set ns.me = ns %}{{ ns }}"),
              HasSubstr("maximum recursion depth exceeded while printing a value"));
  EXPECT_EQ(
      test::render_text("{% set ns = namespace() %}{% set ns.me = ns %}{{ ns.me.me is defined }}"),
      "True");
}

TEST(TemplateLimits, HugeStringsAreRefusedBeforeAllocating) {
  EXPECT_THAT(test::render_error("{{ 'x' * 300000000 }}"),
              HasSubstr("string repetition result is too large"));
  EXPECT_THAT(test::render_error("{{ [1, 2] * 100000000 }}"),
              HasSubstr("list repetition result is too large"));
}

TEST(TemplateLimits, RunawayLoopsStopAtTheBudget) {
  RenderOptions options;
  options.max_loop_iterations = 10000;
  const ChatTemplate nested_loops = ChatTemplate::compile(
      "{% for i in range(1000) %}{% for j in range(1000) %}{% endfor %}{% endfor %}done");
  try {
    nested_loops.render(nlohmann::ordered_json::object(), options);
    ADD_FAILURE() << "the loops ran past their budget";
  } catch (const TemplateError& error) {
    EXPECT_THAT(error.what(), HasSubstr("the template ran more than 10000 loop iterations"));
  }
  options.max_loop_iterations = 2'000'000;
  EXPECT_EQ(nested_loops.render(nlohmann::ordered_json::object(), options), "done");
}

}  // namespace
}  // namespace sluice
