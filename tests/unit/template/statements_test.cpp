// Statements: for loops (loop variables, else, filters, dicts, unpacking, break / continue),
// scoping of set, namespace(), block set, macros, filter and with blocks, and the globals.
// Expected texts come from Jinja2 (see template_test_util.h).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/unit/template/template_test_util.h"

namespace sluice {
namespace {

using test::TemplateCase;

// The variables of every row whose variables are nullptr.
constexpr const char* kStatementCasesVariables = R"json({
 "d": {
  "b": 2,
  "a": 1,
  "C": 3
 },
 "l": [
  3,
  1,
  2
 ],
 "e": [],
 "msgs": [
  {
   "role": "system",
   "content": "sys"
  },
  {
   "role": "user",
   "content": " hi "
  },
  {
   "role": "assistant",
   "content": "yo",
   "tool_calls": [
    {
     "function": {
      "name": "f",
      "arguments": {
       "x": 1
      }
     }
    }
   ]
  }
 ]
})json";

const TemplateCase kStatementCases[] = {
    {"loop variables",
     "{% for x in l %}{{ loop.index }}{{ loop.index0 }}{{ loop.first }}{{ loop.last }}{{ "
     "loop.length }}{{ loop.revindex }}{{ loop.revindex0 }},{% endfor %}",
     nullptr, "10TrueFalse332,21FalseFalse321,32FalseTrue310,"},
    {"previtem nextitem cycle",
     "{% for x in l %}[{{ loop.previtem }}|{{ loop.nextitem }}|{{ loop.cycle('odd', 'even') }}]{% "
     "endfor %}",
     nullptr, "[|1|odd][3|2|even][1||odd]"},
    {"else runs for an empty loop",
     "{% for x in e %}x{% else %}empty{% endfor %}|{% for x in undefined_name %}x{% else "
     "%}undefined is empty{% endfor %}",
     nullptr, "empty|undefined is empty"},
    {"loop filter counts only kept items",
     "{% for x in l if x > 1 %}{{ x }}/{{ loop.length }} {% else %}none{% endfor %}|{% for x in l "
     "if x > 5 %}{{ x }}{% else %}none{% endfor %}",
     nullptr, "3/2 2/2 |none"},
    {"loop over a dict",
     "{% for k in d %}{{ k }}{% endfor %}|{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor "
     "%}|{% for k, v in d|items %}{{ k }}{{ v }}{% endfor %}|{% for k, v in d|dictsort %}{{ k }}{{ "
     "v }}{% endfor %}",
     nullptr, "baC|b=2;a=1;C=3;|b2a1C3|a1b2C3"},
    {"tuple unpacking", "{% for a, b in [[1, 2], [3, 4]] %}{{ a + b }} {% endfor %}", nullptr,
     "3 7 "},
    {"loop over a string", "{% for c in 'héllo' %}[{{ c }}]{% endfor %}", nullptr,
     "[h][é][l][l][o]"},
    {"break and continue",
     "{% for x in l %}{% if x == 1 %}{% break %}{% endif %}{{ x }}{% endfor %}|{% for x in l %}{% "
     "if x == 1 %}{% continue %}{% endif %}{{ x }}{% endfor %}",
     nullptr, "3|32"},
    {"nested loops",
     "{% for x in [1, 2] %}{% for y in [3, 4] %}{{ loop.index }}{{ x }}{{ y }} {% endfor %}{{ "
     "loop.index }}|{% endfor %}",
     nullptr, "113 214 1|123 224 2|"},
    {"set in a loop lasts one iteration",
     "{% set x = 1 %}{% for i in [1, 2] %}{{ x }}{% set x = x + 1 %}{{ x }} {% endfor %}{{ x }}",
     nullptr, "12 12 1"},
    {"set in a loop body is gone after it",
     "{% for i in l %}{% set last = i %}{% endfor %}[{{ last }}]", nullptr, "[]"},
    {"set in an if is visible after it",
     "{% set x = 'out' %}{% if true %}{% set x = 'in' %}{% endif %}{{ x }}", nullptr, "in"},
    {"loop variable shadows and restores",
     "{% set x = 'outer' %}{% for x in [1] %}{{ x }}{% endfor %}{{ x }}", nullptr, "1outer"},
    {"namespace carries state out of a loop",
     "{% set ns = namespace(total=0, found=false) %}{% for i in l %}{% set ns.total = ns.total + i "
     "%}{% if i == 1 %}{% set ns.found = true %}{% endif %}{% endfor %}{{ ns.total }} {{ ns.found "
     "}} {{ ns }}",
     nullptr, "6 True <Namespace {'total': 6, 'found': True}>"},
    {"namespace from a dict",
     "{% set ns = namespace({'a': 1}, b=2) %}{{ ns.a }}{{ ns.b }}[{{ ns.c }}]", nullptr, "12[]"},
    {"set with tuples",
     "{% set a, b = 1, 2 %}{{ a }}{{ b }} {% set c = 1, 2 %}{{ c }} {% set x, y = (3, 4) %}{{ x * "
     "y }}",
     nullptr, "12 (1, 2) 12"},
    {"block set",
     "{% set block %}  inner {{ 1 + 1 }}  {% endset %}[{{ block }}]{% set shout | trim | upper %}  "
     "low  {% endset %}[{{ shout }}]",
     nullptr, "[  inner 2  ][LOW]"},
    {"macro with defaults and keywords",
     "{% macro greet(name, greeting='Hello') %}{{ greeting }}, {{ name }}!{% endmacro %}{{ "
     "greet('Bo') }} {{ greet('Al', greeting='Hi') }} [{{ greet() }}]",
     nullptr, "Hello, Bo! Hi, Al! [Hello, !]"},
    {"macro default sees earlier parameters",
     "{% macro m(a, b=a ~ '!') %}{{ a }}{{ b }}{% endmacro %}{{ m('x') }} {{ m('x', 'y') }}",
     nullptr, "xx! xy"},
    {"recursive macro",
     "{% macro count(n) %}{% if n > 0 %}{{ n }}{{ count(n - 1) }}{% endif %}{% endmacro %}{{ "
     "count(3) }}",
     nullptr, "321"},
    {"macro sees top-level variables, not loop ones",
     "{% set outer = 'top' %}{% macro show() %}{{ outer }}{% endmacro %}{% for i in [1] %}{% set "
     "outer = 'loop' %}{{ show() }}{% endfor %}",
     nullptr, "top"},
    {"filter block",
     "{% filter upper %}hello {{ 'x' }}{% endfilter %}|{% filter trim | title %}  a b  {% "
     "endfilter %}",
     nullptr, "HELLO X|A B"},
    {"with block", "{% with a = 1, b = 2 %}{{ a + b }}{% endwith %}[{{ a }}]", nullptr, "3[]"},
    {"if elif else",
     "{% if false %}a{% elif undefined_name %}b{% elif 0 %}c{% else %}d{% endif %}{% if l %}e{% "
     "endif %}{% if e %}f{% endif %}",
     nullptr, "de"},
    {"print tag", "{% print 'p' ~ 1 %}", nullptr, "p1"},
    {"chat loop",
     "{% for m in msgs %}{{ m.role }}:{{ m['content']|trim }}{% if m.tool_calls is defined %}{% "
     "for tc in m.tool_calls %}[{{ tc.function.name }}({{ tc.function.arguments|tojson }})]{% "
     "endfor %}{% endif %}\n{% endfor %}",
     nullptr, "system:sysuser:hiassistant:yo[f({\"x\": 1})]"},
    {"loop index arithmetic on messages",
     "{% for m in msgs %}{% if loop.index0 > 0 and msgs[loop.index0 - 1].role == 'system' "
     "%}after-system:{{ m.role }}{% endif %}{% endfor %}",
     nullptr, "after-system:user"},
    {"raise_exception in a branch not taken",
     "{% if false %}{{ raise_exception('never') }}{% endif %}ok", nullptr, "ok"},
    {"strftime_now", "{{ strftime_now('%d %b %Y') }}|{{ strftime_now('%Y-%m-%d %H:%M:%S %A %j') }}",
     nullptr, "26 Jul 2024|2024-07-26 12:00:00 Friday 208"},
    {"recursive loop",
     "{% for item in tree recursive %}<{{ item.name }}:{{ loop.depth }}{% if item.children %}[{{ "
     "loop(item.children) }}]{% endif %}>{% endfor %}",
     "{\"tree\": [{\"name\": \"a\", \"children\": [{\"name\": \"b\", \"children\": [{\"name\": "
     "\"c\"}]}, {\"name\": \"d\"}]}, {\"name\": \"e\"}]}",
     "<a:1[<b:2[<c:3>]><d:2>]><e:1>"},
    {"range and dict",
     "{{ range(3)|list }} {{ range(1, 7, 2)|list }} {{ range(5, 0, -2)|list }} {{ dict(a=1, b='x') "
     "}} {{ dict({'k': 1}, z=2) }}",
     nullptr, "[0, 1, 2] [1, 3, 5] [5, 3, 1] {'a': 1, 'b': 'x'} {'k': 1, 'z': 2}"},
};

TEST(TemplateStatements, MatchJinja2) {
  test::expect_cases_render(kStatementCases, kStatementCasesVariables);
}

// transformers' AssistantTracker extension: {% generation %} only marks assistant text.
TEST(TemplateStatements, GenerationBlockRendersItsBody) {
  EXPECT_EQ(test::render_text("a{% generation %}b{{ 1 }}{% endgeneration %}c"), "ab1c");
}

TEST(TemplateStatements, UnpackingChecksTheLength) {
  EXPECT_THAT(test::render_error("{% set a, b = [1] %}"),
              ::testing::HasSubstr("not enough values to unpack (expected 2, got 1)"));
  EXPECT_THAT(test::render_error("{% for a, b in [1] %}{% endfor %}"),
              ::testing::HasSubstr("cannot unpack non-iterable int object"));
}

TEST(TemplateStatements, AttributeAssignmentNeedsANamespace) {
  EXPECT_THAT(test::render_error("{% set x = 1 %}{% set x.y = 2 %}"),
              ::testing::HasSubstr("cannot assign attribute on non-namespace object"));
}

TEST(TemplateStatements, OnlyRecursiveLoopsCanBeCalled) {
  EXPECT_THAT(test::render_error("{% for x in [1] %}{{ loop([2]) }}{% endfor %}"),
              ::testing::HasSubstr("must have the 'recursive' marker"));
}

TEST(TemplateStatements, RunawayMacroRecursionFailsCleanly) {
  EXPECT_THAT(test::render_error("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}"),
              ::testing::HasSubstr("maximum macro recursion depth exceeded"));
  EXPECT_THAT(
      test::render_error("{% for x in l recursive %}{{ loop(l) }}{% endfor %}", R"({"l": [1]})"),
      ::testing::HasSubstr("maximum loop recursion depth exceeded"));
}

TEST(TemplateStatements, RangeIsBoundedAsInTheSandbox) {
  EXPECT_THAT(test::render_error("{{ range(1000000)|length }}"),
              ::testing::HasSubstr("Range too big"));
}

TEST(TemplateStatements, StrftimeNowUsesTheGivenTime) {
  RenderOptions options;
  options.now = test::reference_time();
  const ChatTemplate chat_template = ChatTemplate::compile("{{ strftime_now('%d %b %Y') }}");
  EXPECT_EQ(chat_template.render(nlohmann::ordered_json::object(), options), "26 Jul 2024");
  // Without a fixed time it formats the clock: a 4-digit year at least.
  EXPECT_THAT(
      ChatTemplate::compile("{{ strftime_now('%Y') }}").render(nlohmann::ordered_json::object()),
      ::testing::MatchesRegex("[0-9]{4}"));
}

}  // namespace
}  // namespace sluice
