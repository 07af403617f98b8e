// A chat template comes with a downloaded model, so a hostile or broken one must fail with a
// clear error instead of overflowing the stack, exhausting memory, leaking or hanging. These
// check each bound, and that ordinary large templates stay well inside them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

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

// Nesting as deep as the parser allows everywhere at once still renders: only recursion meets
// the renderer's own nesting limit.
TEST(TemplateLimits, TemplatesAtTheParserLimitsRender) {
  const std::string expression = repeat("(", 95) + "1" + repeat(")", 95) + repeat(" + 1", 490);
  const std::string source = repeat("{% if true %}", 195) + "{{ " + repeat("- ", 5) + "(" +
                             expression + ") }}" + repeat("{% endif %}", 195);
  EXPECT_EQ(test::render_text(source), "-491");
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

// Renders source with options (the reference clock aside) and returns the TemplateError's
// message, or "" when it renders.
std::string render_error_with(const std::string& source, RenderOptions options) {
  try {
    ChatTemplate::compile(source).render(nlohmann::ordered_json::object(), options);
  } catch (const TemplateError& error) {
    return error.what();
  }
  return "";
}

TEST(TemplateLimits, DeepRecursionThroughMacrosFailsCleanly) {
  // Each call nests its caller 400 operators deep: 90 calls would need 36000 levels of stack,
  // far past what a thread has.
  const std::string source = "{% macro f(n) %}{% if n > 0 %}{{ f(n - 1)" + repeat(" ~ 'x'", 400) +
                             " }}{% endif %}{% endmacro %}{{ f(90) }}";
  EXPECT_THAT(test::render_error(source),
              HasSubstr("nests expressions, blocks and calls more than 1000 levels deep"));
  EXPECT_THAT(test::render_error("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}"),
              HasSubstr("maximum macro recursion depth exceeded"));
  EXPECT_THAT(test::render_error("{% for x in [[1]] recursive %}{{ loop([x]) }}{% endfor %}"),
              HasSubstr("maximum loop recursion depth exceeded"));
}

TEST(TemplateLimits, ExponentialMacroCallsStopAtTheBudget) {
  RenderOptions options;
  options.max_loop_iterations = 10000;
  EXPECT_THAT(render_error_with("{% macro f(n) %}{% if n > 0 %}{{ f(n - 1) }}{{ f(n - 1) }}"
                                "{% endif %}{% endmacro %}{{ f(60) }}",
                                options),
              HasSubstr("the template ran more than 10000 loop iterations and macro calls"));
}

TEST(TemplateLimits, LoopConditionsCountTowardTheBudget) {
  RenderOptions options;
  options.max_loop_iterations = 10000;
  EXPECT_THAT(render_error_with("{% for i in range(1000) %}{% for j in range(1000) if j < 0 %}"
                                "{% endfor %}{% endfor %}done",
                                options),
              HasSubstr("the template ran more than 10000 loop iterations"));
}

TEST(TemplateLimits, HugeValuesAreRefusedBeforeAllocating) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{{ 'x' * 10**12 }}", "string repetition result is too large"},
      {"{{ ('x' * 1000000) * 10**13 }}", "string repetition result is too large"},
      {"{{ 'x' * 100000000 }}", "string repetition result is too large"},
      {"{{ [1, 2] * 10**12 }}", "list repetition result is too large"},
      {"{{ range(10**12)|length }}", "Range too big"},
      {"{{ 'x'|center(10**12) }}", "center result is too large"},
      {"{{ 'x'.center(10**12) }}", "string result is too large"},
      {"{{ 'x'.ljust(10**12, '-') }}", "string result is too large"},
      {"{{ '1'.zfill(10**12) }}", "zfill result is too large"},
      {"{{ 'x'|indent(10**12, true) }}", "indent width is too large"},
      {"{{ [1]|tojson(indent=10**12) }}", "tojson indent is too large"},
      {"{{ ('x' * 1000)|replace('x', 'y' * 1000000) }}", "string result is too large"},
      {"{{ ('x' * 1000).replace('', 'y' * 1000000) }}", "string result is too large"},
      {"{{ ('ab' * 4200000).split('a')|length }}", "split result is too large"},
      {"{{ ('ab' * 2100000)|list|length }}", "list of characters is too large"},
      {"{{ range(100)|join('x' * 1000000) }}", "string result is too large"},
      {"{{ ('%s' * 100) % (('x' * 1000000,) * 100) }}", "string result is too large"},
      {"{{ ('{0}' * 100).format('x' * 1000000) }}", "string result is too large"},
      {"{{ ['x' * 67108864] }}", "string result is too large"},
      {"{{ 'abc'|batch(10**12, 'x')|list }}", "batch is too large"},
      {"{{ strftime_now('%c' * 2800000)|length }}", "strftime_now result is too large"},
      {"{{ '%c' % 1114112 }}", "%c arg not in range(0x110000)"},
      {"{% set l = [0] * 2100000 %}{{ (l + l)|length }}", "list result is too large"},
  };
  for (const auto& [source, message] : cases) {
    EXPECT_THAT(test::render_error(source), HasSubstr(message)) << source;
  }
  // Empty sequences repeat at once, and ranges and slices with extreme steps do not overflow.
  EXPECT_EQ(test::render_text("[{{ '' * 10**12 }}]{{ [] * 10**12 }}"), "[][]");
  EXPECT_EQ(test::render_text("{{ range(2, 9223372036854775807, 9223372036854775806)|list }}"
                              "{{ range(-9223372036854775807, 9223372036854775807, "
                              "9223372036854775807)|list }}"),
            "[2][-9223372036854775807, 0]");
  EXPECT_EQ(test::render_text("{{ 'abcdefg'[5::9223372036854775807] }}"
                              "{{ 'abcdefg'[::-9223372036854775807] }}{{ [1, 2, 3][1:-1:2] }}"),
            "fg[2]");
}

TEST(TemplateLimits, RunawayWorkOnValuesStopsAtTheByteBudget) {
  RenderOptions options;
  options.max_processed_bytes = uint64_t{1} << 26;
  // Scanning one big string in every iteration: few steps, a lot of work.
  EXPECT_THAT(render_error_with("{% set big = 'x' * 1000000 %}{% for i in range(100000) %}"
                                "{% if big|length > 0 and 'y' in big %}{% endif %}{% endfor %}",
                                options),
              HasSubstr("the template worked through more than 67108864 bytes"));
  // A list that holds itself twice doubles what printing or comparing it visits.
  EXPECT_THAT(render_error_with("{% set ns = namespace(a=[1]) %}{% for i in range(30) %}"
                                "{% set ns.a = [ns.a, ns.a] %}{% endfor %}{{ ns.a == ns.a }}",
                                options),
              HasSubstr("the template worked through more than 67108864 bytes"));
  // Building a string quadratically through a namespace.
  EXPECT_THAT(render_error_with("{% set ns = namespace(s='') %}{% for i in range(20000) %}"
                                "{% set ns.s = ns.s ~ 'xxxxxxxxxx' %}{% endfor %}",
                                options),
              HasSubstr("the template worked through more than 67108864 bytes"));
}

TEST(TemplateLimits, OversizedTemplatesFailToCompile) {
  EXPECT_THAT(test::compile_error(std::string(kMaxTemplateBytes + 1, 'x')),
              HasSubstr("the template is too large (1048577 bytes; the limit is 1048576)"));
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
