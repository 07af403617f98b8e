// Filters, tests (`is`), and str / dict / list methods. Expected texts come from Jinja2 (see
// template_test_util.h).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/unit/template/template_test_util.h"

namespace sluice {
namespace {

using test::TemplateCase;

// The variables of every row whose variables are nullptr.
constexpr const char* kFilterCasesVariables = R"json({
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
 "words": [
  "b",
  "A",
  "a",
  "c"
 ],
 "s": "  Hello, World  ",
 "u": "Привет мир ÉTÉ straße",
 "e": [],
 "n": null,
 "people": [
  {
   "name": "Bo",
   "age": 30
  },
  {
   "name": "al",
   "age": 25
  },
  {
   "name": "Cy",
   "age": 30
  },
  {
   "name": "dee"
  }
 ]
})json";

const TemplateCase kFilterCases[] = {
    {"trim and length",
     "[{{ s|trim }}] [{{ s|trim(' H') }}] {{ s|length }} {{ u|length }} {{ l|count }} {{ d|length "
     "}} {{ undefined_name|length }}",
     nullptr, "[Hello, World] [ello, World] 16 21 3 3 0"},
    {"case filters",
     "{{ u|upper }}|{{ u|lower }}|{{ u|title }}|{{ u|capitalize }}|{{ 'hello world'|title }}|{{ "
     "'x-y (z) [w] <v> it\\'s'|title }}|{{ 'hELLO wORLD'|capitalize }}",
     nullptr,
     "ПРИВЕТ МИР ÉTÉ STRASSE|привет мир été straße|Привет Мир Été Straße|Привет мир été "
     "straße|Hello World|X-Y (Z) [W] <V> It's|Hello world"},
    {"join first last",
     "{{ l|join(', ') }}|{{ l|join }}|{{ people|join(',', attribute='name') }}|{{ l|first }}|{{ "
     "l|last }}|[{{ e|first }}]|{{ 'abc'|first }}|{{ 'abc'|last }}|{{ d|first }}",
     nullptr, "3, 1, 2|312|Bo,al,Cy,dee|3|2|[]|a|c|b"},
    {"sort",
     "{{ l|sort }} {{ l|sort(reverse=true) }} {{ words|sort }} {{ words|sort(case_sensitive=true) "
     "}} {{ people|sort(attribute='name')|map(attribute='name')|join(',') }}",
     nullptr, "[1, 2, 3] [3, 2, 1] ['A', 'a', 'b', 'c'] ['A', 'a', 'b', 'c'] al,Bo,Cy,dee"},
    {"sort is stable",
     "{{ people|selectattr('age')|sort(attribute='age', "
     "reverse=true)|map(attribute='name')|join(',') }}",
     nullptr, "Bo,Cy,al"},
    {"selectattr rejectattr map",
     "{{ people|selectattr('age')|map(attribute='name')|list }} {{ people|rejectattr('age', "
     "'defined')|list }} {{ people|selectattr('age', 'equalto', 30)|list|length }} {{ "
     "people|map(attribute='age', default=0)|list }}",
     nullptr, "['Bo', 'al', 'Cy'] [{'name': 'dee'}] 2 [30, 25, 30, 0]"},
    {"select reject map by name",
     "{{ l|map('string')|join('+') }} {{ words|map('upper')|list }} {{ l|select('odd')|list }} {{ "
     "l|reject('odd')|list }} {{ l|select('greaterthan', 1)|list }} {{ words|reject('equalto', "
     "'a')|list }} {{ [0, 1, none, '', 'x']|select|list }}",
     nullptr, "3+1+2 ['B', 'A', 'A', 'C'] [3, 1] [2] [3, 2] ['b', 'A', 'c'] [1, 'x']"},
    {"dictsort unique min max sum",
     "{{ d|dictsort }} {{ d|dictsort(true) }} {{ d|dictsort(by='value', reverse=true) }} {{ "
     "words|unique|list }} {{ words|unique(case_sensitive=true)|list }} {{ l|max }} {{ l|min }} {{ "
     "words|max }} {{ people|selectattr('age')|max(attribute='age') }} {{ l|sum }} {{ "
     "people|selectattr('age')|sum(attribute='age') }}",
     nullptr,
     "[('a', 1), ('b', 2), ('C', 3)] [('C', 3), ('a', 1), ('b', 2)] [('C', 3), ('b', 2), ('a', 1)] "
     "['b', 'A', 'c'] ['b', 'A', 'a', 'c'] 3 1 c {'name': 'Bo', 'age': 30} 6 85"},
    {"reverse list items",
     "{{ l|reverse|list }} {{ 'abc'|reverse }} {{ d|list }} {{ 'ab'|list }} {{ d|items|list }} {{ "
     "undefined_name|items|list }}",
     nullptr, "[2, 1, 3] cba ['b', 'a', 'C'] ['a', 'b'] [('b', 2), ('a', 1), ('C', 3)] []"},
    {"numbers",
     "{{ -3|abs }} {{ -2.5|abs }} {{ 2.5|round }} {{ 3.5|round }} {{ 3.14159|round(2) }} {{ "
     "7|round }} {{ 1.25|round(1, 'floor') }} {{ 1.21|round(1, 'ceil') }}",
     nullptr, "3 2.5 2.0 4.0 3.14 7 1.2 1.3"},
    {"int and float",
     "{{ '42'|int }} {{ 'x'|int }} {{ 'x'|int(5) }} {{ '4.7'|int }} {{ 4.7|int }} {{ "
     "'0x1A'|int(base=16) }} {{ none|int }} {{ '3.5'|float }} {{ 'x'|float }} {{ 3|float }}",
     nullptr, "42 0 5 4 4 26 0 3.5 0.0 3.0"},
    {"string and default",
     "{{ 5|string ~ 'x' }} {{ none|string }} {{ true|string }} [{{ undefined_name|string }}] {{ "
     "undefined_name|default('dv') }} {{ none|default('dv') }} {{ ''|default('dv', true) }} {{ "
     "0|d('z', boolean=true) }} {{ 'x'|d('y') }}",
     nullptr, "5x None True [] dv None dv z x"},
    {"escape safe replace",
     "{{ 'a<b>&\"c\\''|e }} {{ 'x'|safe }} {{ 'abc'|replace('b', 'X') }} {{ 'aaa'|replace('a', "
     "'b', 2) }} {{ 'hello world foo_bar 42'|wordcount }}",
     nullptr, "a&lt;b&gt;&amp;&#34;c&#39; x aXc bba 4"},
    {"center indent format",
     "[{{ 'ab'|center(7) }}] [{{ 'a\\nb\\n\\nc'|indent(2) }}] [{{ 'a\\nb'|indent(2, true) }}] [{{ "
     "'a\\n\\nb'|indent('--', blank=true) }}] {{ '%s-%s'|format('a', 'b') }}",
     nullptr, "[   ab  ] [a\n  b\n\n  c] [  a\n  b] [a\n--\n--b] a-b"},
    {"batch", "{{ l|batch(2)|list }} {{ l|batch(2, 'x')|list }}", nullptr,
     "[[3, 1], [2]] [[3, 1], [2, 'x']]"},
    {"tests",
     "{{ l is defined }}{{ zz is defined }}{{ zz is undefined }}{{ n is none }}{{ n is not none "
     "}}{{ 1 is number }}{{ true is number }}{{ 1.0 is float }}{{ 1 is integer }}{{ true is "
     "integer }}{{ true is boolean }}{{ 's' is string }}{{ d is mapping }}{{ l is iterable }}{{ "
     "'s' is sequence }}{{ zz is iterable }}{{ 1 is iterable }}",
     nullptr, "TrueFalseTrueTrueFalseTrueTrueTrueTrueFalseTrueTrueTrueTrueTrueTrueFalse"},
    {"more tests",
     "{{ 3 is odd }}{{ 4 is even }}{{ 9 is divisibleby 3 }}{{ 9 is divisibleby(2) }}{{ 1 is eq 1 "
     "}}{{ 2 is gt 1 }}{{ 2 is lt 1 }}{{ 'a' is in 'cat' }}{{ 'a' is lower }}{{ 'A' is upper }}{{ "
     "true is true }}{{ 0 is false }}{{ n is sameas none }}{{ range is callable }}{{ l is callable "
     "}}{{ 'upper' is filter }}{{ 'odd' is test }}",
     nullptr, "TrueTrueTrueFalseTrueTrueFalseTrueTrueTrueTrueFalseTrueTrueFalseTrueTrue"},
    {"str methods",
     "{{ s.strip() }}|{{ s.lstrip() }}|{{ s.rstrip() }}|{{ s.strip(' H') }}|{{ 'a,b,,c'.split(',') "
     "}}|{{ '  a b  '.split() }}|{{ 'a b c'.split(' ', 1) }}|{{ 'a.b.c'.rsplit('.', 1) }}|{{ "
     "'x\\ny\\r\\nz'.splitlines() }}",
     nullptr,
     "Hello, World|Hello, World  |  Hello, World|ello, World|['a', 'b', '', 'c']|['a', 'b']|['a', "
     "'b c']|['a.b', 'c']|['x', 'y', 'z']"},
    {"more str methods",
     "{{ 'abc'.startswith('a') }}{{ 'abc'.startswith(('x', 'ab')) }}{{ 'abc'.endswith('bc') }}{{ "
     "'Hello'.upper() }}{{ 'Hello'.lower() }}{{ 'hello world'.title() }}{{ 'hELLO'.capitalize() "
     "}}{{ 'abcb'.replace('b', 'X') }}{{ 'abcb'.find('b') }}{{ 'abcb'.rfind('b') }}{{ "
     "'abc'.find('z') }}{{ 'abcb'.count('b') }}",
     nullptr, "TrueTrueTrueHELLOhelloHello WorldHelloaXcX13-12"},
    {"str methods on text",
     "{{ '-'.join(['a', 'b']) }}|{{ 'ab'.center(5, '*') }}|{{ 'ab'.ljust(4, '.') }}|{{ "
     "'ab'.rjust(4) }}|{{ '7'.zfill(3) }}|{{ 'prefix_x'.removeprefix('prefix_') }}|{{ "
     "'x.txt'.removesuffix('.txt') }}|{{ '123'.isdigit() }}{{ 'ab'.isalpha() }}{{ '  '.isspace() "
     "}}{{ 'ab'.islower() }}{{ 'AB'.isupper() }}|{{ u.upper() }}|{{ u.find('мир') }}",
     nullptr, "a-b|**ab*|ab..|  ab|007|x|x|TrueTrueTrueTrueTrue|ПРИВЕТ МИР ÉTÉ STRASSE|7"},
    {"dict and list methods",
     "{{ d.get('a') }}|{{ d.get('zz') }}|{{ d.get('zz', 'dflt') }}|{{ d.keys() }}|{{ d.values() "
     "}}|{{ d.items() }}|{{ d.keys()|list }}|{{ l.index(1) }}|{{ l.count(3) }}|{{ d.copy() }}",
     nullptr,
     "1|None|dflt|dict_keys(['b', 'a', 'C'])|dict_values([2, 1, 3])|dict_items([('b', 2), ('a', "
     "1), ('C', 3)])|['b', 'a', 'C']|1|1|{'b': 2, 'a': 1, 'C': 3}"},
};

TEST(TemplateFilters, MatchJinja2) {
  test::expect_cases_render(kFilterCases, kFilterCasesVariables);
}

TEST(TemplateFilters, UnknownFilterFailsOnlyWhenReached) {
  const ChatTemplate chat_template =
      ChatTemplate::compile("{% if x %}{{ x|no_such_filter }}{% endif %}ok");
  EXPECT_EQ(chat_template.render({{"x", false}}), "ok");
  try {
    chat_template.render({{"x", true}});
    ADD_FAILURE() << "rendered through an unknown filter";
  } catch (const TemplateError& error) {
    EXPECT_STREQ(error.what(),
                 "template error at line 1, column 16: no filter named 'no_such_filter'");
  }
}

TEST(TemplateFilters, UnknownTestFailsWhenReached) {
  EXPECT_THAT(test::render_error("{{ 1 is no_such_test }}"),
              ::testing::HasSubstr("no test named 'no_such_test'"));
}

TEST(TemplateFilters, BadArgumentsAreErrors) {
  EXPECT_THAT(test::render_error("{{ 'a'|trim(1, 2, 3) }}"), ::testing::HasSubstr("trim()"));
  EXPECT_THAT(test::render_error("{{ 'a'|replace('a') }}"),
              ::testing::HasSubstr("missing required argument 'new'"));
  EXPECT_THAT(test::render_error("{{ 'a'|join(sep=',') }}"),
              ::testing::HasSubstr("unexpected keyword argument 'sep'"));
  EXPECT_THAT(test::render_error("{{ 5|length }}"),
              ::testing::HasSubstr("object of type 'int' has no len()"));
  EXPECT_THAT(test::render_error("{{ [1]|items }}"),
              ::testing::HasSubstr("Can only get item pairs from a mapping."));
}

}  // namespace
}  // namespace sluice
