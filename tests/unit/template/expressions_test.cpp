// Expressions: literals, operators with Python's semantics, attribute / item access, slicing,
// and printing values the way Python's str() does. Expected texts come from Jinja2 (see
// template_test_util.h).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/unit/template/template_test_util.h"

namespace sluice {
namespace {

using test::TemplateCase;

// The variables of every row whose variables are nullptr.
constexpr const char* kExpressionCasesVariables = R"json({
 "d": {
  "a": 1,
  "b": [
   1,
   2,
   {
    "c": "x"
   }
  ],
  "items": "stored"
 },
 "l": [
  3,
  1,
  2
 ],
 "s": "Hello, World",
 "u": "Привет 🙂 straße",
 "n": null,
 "t": true,
 "f": 1.5,
 "i": -7
})json";

const TemplateCase kExpressionCases[] = {
    {"precedence", "{{ 1 + 2 * 3 }} {{ (1 + 2) * 3 }} {{ 2 ** 3 ** 2 }} {{ -2 ** 2 }}", nullptr,
     "7 9 64 4"},
    {"division",
     "{{ 7 / 2 }} {{ 6 / 3 }} {{ 7 // 2 }} {{ -7 // 2 }} {{ 7 % -3 }} {{ -7 % 3 }} {{ 7.5 // 2 }} "
     "{{ -7.5 % 2 }}",
     nullptr, "3.5 2.0 3 -4 -2 2 3.0 0.5"},
    {"number literals",
     "{{ 1_000 }} {{ 0x1F }} {{ 0o17 }} {{ 0b101 }} {{ 1e3 }} {{ 2.5e-3 }} {{ 3.0 }}", nullptr,
     "1000 31 15 5 1000.0 0.0025 3.0"},
    {"float printing",
     "{{ 0.1 + 0.2 }} {{ 1e16 }} {{ 1e15 }} {{ 1e-5 }} {{ 0.0001 }} {{ 1 / 3 }} {{ -0.0 }} {{ 2 ** "
     "-1 }}",
     nullptr,
     "0.30000000000000004 1e+16 1000000000000000.0 1e-05 0.0001 0.3333333333333333 -0.0 0.5"},
    {"bool arithmetic", "{{ true + 1 }} {{ true * 3 }} {{ false - 1 }}", nullptr, "2 3 -1"},
    {"unary", "{{ -f }} {{ +i }} {{ -i }} {{ not n }} {{ not not 'x' }}", nullptr,
     "-1.5 -7 7 True True"},
    {"string operators",
     "{{ 'a' ~ 1 ~ none ~ true ~ undefined_name }} {{ 'ab' * 2 }} {{ 2 * 'c' }} {{ 'x' + 'y' }}",
     nullptr, "a1NoneTrue abab cc xy"},
    {"list operators", "{{ [1] * 3 }} {{ [1, 2] + [3] }} {{ (1, 2) + (3,) }}", nullptr,
     "[1, 1, 1] [1, 2, 3] (1, 2, 3)"},
    {"comparisons",
     "{{ 1 == 1.0 }} {{ true == 1 }} {{ 'a' != 'b' }} {{ 1 < 2 < 3 }} {{ 3 > 2 > 2 }} {{ 'a' < 'b' "
     "}} {{ [1, 2] < [1, 3] }} {{ none == none }} {{ (1, 2) == [1, 2] }}",
     nullptr, "True True True True False True True True False"},
    {"undefined comparisons",
     "{{ undefined_name == undefined_name }} {{ undefined_name == none }} {{ undefined_name != 0 "
     "}}",
     nullptr, "True False True"},
    {"membership",
     "{{ 1 in [1, 2] }} {{ 'a' in 'cat' }} {{ 'a' in d }} {{ 'zz' not in d }} {{ 5 not in l }} {{ "
     "'x' in undefined_name }}",
     nullptr, "True True True True True False"},
    {"and or return operands",
     "{{ true and 'x' }} {{ false or 'y' }} {{ none or [] or 0 }} {{ '' and 1 }} {{ 0 or none }}",
     nullptr, "x y 0  None"},
    {"conditional expressions",
     "{{ 'yes' if t else 'no' }} {{ 'yes' if n else 'no' }} [{{ 'a' if false }}] {{ 1 if 0 else 2 "
     "if 0 else 3 }}",
     nullptr, "yes no [] 3"},
    {"attribute and item access",
     "{{ d.a }} {{ d['a'] }} {{ d.b[2].c }} {{ d.b[-1]['c'] }} {{ d.b.0 }} {{ l[-1] }} [{{ "
     "d.missing }}] [{{ l[10] }}]",
     nullptr, "1 1 x x 1 2 [] []"},
    {"item first, attribute first", "{{ d['items'] }} {{ d.items() }}", nullptr,
     "stored dict_items([('a', 1), ('b', [1, 2, {'c': 'x'}]), ('items', 'stored')])"},
    {"string indexing", "{{ s[0] }} {{ s[-1] }} {{ u[1] }} {{ u[-1] }} {{ u[7] }}", nullptr,
     "H d р e 🙂"},
    {"slicing",
     "{{ s[1:4] }} {{ s[::-1] }} {{ s[::2] }} {{ s[-5:] }} {{ s[:-7] }} {{ l[1:] }} {{ l[:1] }} {{ "
     "l[::-1] }} {{ l[5:1:-1] }} {{ l[-100:100] }} [{{ s[3:1] }}]",
     nullptr, "ell dlroW ,olleH Hlo ol World Hello [1, 2] [3] [2, 1, 3] [2] [3, 1, 2] []"},
    {"slicing counts characters", "{{ u[0:6] }} {{ u[7:8] }} {{ u[::-1] }} {{ u[-6:] }}", nullptr,
     "Привет 🙂 eßarts 🙂 тевирП straße"},
    {"printing like Python str",
     "{{ n }} {{ t }} {{ f }} {{ [1, 'a', none, true, 1.0, [2], {'k': 'v'}] }} {{ {'a': 1, 'b': "
     "'it\\'s'} }} {{ ('x',) }} {{ () }} {{ [] }} {{ {} }}",
     nullptr,
     "None True 1.5 [1, 'a', None, True, 1.0, [2], {'k': 'v'}] {'a': 1, 'b': \"it's\"} ('x',) () "
     "[] {}"},
    {"string repr quoting",
     "{{ ['it\\'s'] }} {{ ['a\"b'] }} {{ ['a\\'b\"c'] }} {{ ['\\n\\t\\\\'] }}", nullptr,
     "[\"it's\"] ['a\"b'] ['a\\'b\"c'] ['\\n\\t\\\\']"},
    {"string repr escapes",
     "{{ ['\\x01', '\\x7f', 'é', '\\u00a0', '\\u200b', '🙂', '\\u2028'] }}", nullptr,
     "['\\x01', '\\x7f', 'é', '\\xa0', '\\u200b', '🙂', '\\u2028']"},
    {"string escapes",
     "{{ 'tab\\there' }}|{{ \"q\\\"q\" }}|{{ '\\u00e9\\x41\\101' }}|{{ '\\q' }}|{{ 'a' 'b' \"c\" "
     "}}",
     nullptr, "tab\there|q\"q|éAA|\\q|abc"},
    {"raw newline in a string literal", "{{ 'line one\nline two' }}", nullptr,
     "line one\nline two"},
    {"tuples", "{{ 1, 2 }} {{ (1,) }} {% set t = 'a', 'b' %}{{ t }} {{ t[1] }}", nullptr,
     "(1, 2) (1,) ('a', 'b') b"},
    {"dict literals",
     "{{ {'a': 1, 'b': [1, 2], 'c': {'d': none}} }} {{ {'k': 'v'}.k }} {{ {'a': 1,}['a'] }} {{ [1, "
     "2,] }}",
     nullptr, "{'a': 1, 'b': [1, 2], 'c': {'d': None}} v 1 [1, 2]"},
    {"percent formatting",
     "{{ '%s and %s' % ('a', 1) }} {{ '%d%%' % 5 }} {{ '%.2f' % 3.14159 }} {{ '%5s|%-5s|' % ('a', "
     "'b') }} {{ '%(x)s' % {'x': 9} }} {{ '%s' % none }} {{ '%r' % 'q' }} {{ '%05d|%+d|%x' % (42, "
     "5, 255) }}",
     nullptr, "a and 1 5% 3.14     a|b    | 9 None 'q' 00042|+5|ff"},
    {"str.format",
     "{{ '{} {}'.format('a', 2) }} {{ '{0}-{0}'.format('z') }} {{ '{name}!'.format(name='n') }} {{ "
     "'{:>6}|{:<4}|{:^5}'.format('r', 'l', 'c') }} {{ '{:.3f}'.format(2.0) }} {{ "
     "'{:05d}'.format(42) }} {{ '{{}}'.format() }}",
     nullptr, "a 2 z-z n!      r|l   |  c   2.000 00042 {}"},
    {"call results are values",
     "{{ 'a,b'.split(',')[1].upper() }} {{ (l|sort)[0] }} {{ range(3)[-1] }}", nullptr, "B 1 2"},
};

TEST(TemplateExpressions, MatchJinja2) {
  test::expect_cases_render(kExpressionCases, kExpressionCasesVariables);
}

TEST(TemplateExpressions, UndefinedPrintsAsEmptyAndIsFalsy) {
  EXPECT_EQ(test::render_text("[{{ missing }}]{% if missing %}yes{% else %}no{% endif %}"), "[]no");
  EXPECT_EQ(test::render_text("{{ m.x }}|{{ m['y'] }}", R"({"m": {}})"), "|");
}

TEST(TemplateExpressions, UsingAnUndefinedValueFailsLikeJinja2) {
  EXPECT_THAT(test::render_error("{{ missing.x }}"),
              ::testing::HasSubstr("'missing' is undefined"));
  EXPECT_THAT(test::render_error("{{ m.a.b }}", R"({"m": {}})"),
              ::testing::HasSubstr("'dict object' has no attribute 'a'"));
  EXPECT_THAT(test::render_error("{{ l[3].x }}", R"({"l": [1]})"),
              ::testing::HasSubstr("list object has no element 3"));
  EXPECT_THAT(test::render_error("{{ missing + 1 }}"),
              ::testing::HasSubstr("'missing' is undefined"));
}

TEST(TemplateExpressions, PythonTypeErrors) {
  EXPECT_THAT(test::render_error("{{ 'a' + 1 }}"),
              ::testing::HasSubstr("can only concatenate str (not \"int\") to str"));
  EXPECT_THAT(test::render_error("{{ 1 < 'a' }}"),
              ::testing::HasSubstr("'<' not supported between instances of 'int' and 'str'"));
  EXPECT_THAT(test::render_error("{{ 1 / 0 }}"), ::testing::HasSubstr("division by zero"));
  EXPECT_THAT(test::render_error("{{ 'x'() }}"),
              ::testing::HasSubstr("'str' object is not callable"));
  EXPECT_THAT(test::render_error("{{ 9223372036854775807 + 1 }}"),
              ::testing::HasSubstr("integer overflow"));
}

TEST(TemplateExpressions, MutatingMethodsAreRefusedAsInTheSandbox) {
  EXPECT_THAT(test::render_error("{{ l.append(2) }}", R"({"l": [1]})"),
              ::testing::HasSubstr("access to attribute 'append' of 'list' object is unsafe."));
  EXPECT_THAT(test::render_error("{{ d.update({}) }}", R"({"d": {}})"),
              ::testing::HasSubstr("access to attribute 'update' of 'dict' object is unsafe."));
}

}  // namespace
}  // namespace sluice
