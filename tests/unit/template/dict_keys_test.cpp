// Dicts whose keys are not strings, as templates build them: ByteDance Seed-OSS writes
// `{0: 0, 512: 128, 1024: 256}` and reads it back with d[512], `in` and |dictsort. Keys compare
// as Python's do (1, 1.0 and True are one key, '1' is another), print with their repr, and
// |tojson writes them as json.dumps does ("512"). Expected texts were rendered by Jinja2 3.1.6
// configured as transformers configures it (see template_test_util.h), not derived by hand.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/unit/template/template_test_util.h"

namespace sluice {
namespace {

using test::TemplateCase;

const TemplateCase kDictKeyCases[] = {
    {"Seed-OSS budget map",
     "{%- set budget_map = {0: 0, 512: 128, 1024: 256} -%}{%- for k, v in budget_map|dictsort "
     "-%}{{ k }}:{{ v }},{%- endfor -%}",
     nullptr, "0:0,512:128,1024:256,"},
    {"int keys print as Python does",
     "{{ {0: 0, 512: 128, 1024: 256} }} {{ {1.5: 'x', None: 'n', False: 'f', 'k': \"q'\"} }} {{ "
     "{(1, 2): 'pair'} }}",
     nullptr,
     "{0: 0, 512: 128, 1024: 256} {1.5: 'x', None: 'n', False: 'f', 'k': \"q'\"} {(1, 2): 'pair'}"},
    {"subscript, in and get",
     "{% set d = {0: 0, 512: 128, 1024: 256} %}{{ d[512] }} {{ 512 in d }} {{ '512' in d }} {{ 7 "
     "in d }} {{ d.get(1024) }} {{ d.get('1024') }} {{ d.get(7, 'none') }} {{ d['512'] is defined "
     "}} [{{ d[7] }}]",
     nullptr, "128 True False False 256 None none False []"},
    {"1, 1.0 and True are one key",
     "{% set d = {1: 'a', 1.0: 'b', True: 'c'} %}{{ d }} {{ d|length }} {{ {True: 'a', 1: 'b'} }} "
     "{{ {1: 2}.get(1.0) }} {{ {1: 2}[True] }} {{ {-0.0: 1, 0: 2} }} {{ {(1, 2): 'p'}[(1.0, 2)] }}",
     nullptr, "{1: 'c'} 1 {True: 'b'} 2 2 {-0.0: 2} p"},
    {"items keys values",
     "{% set d = {2: 'b', 1: 'c'} %}{{ d|items|list }} {{ d.items() }} {{ d.keys() }} {{ "
     "d.values() }} {{ d|list }} {% for k, v in d.items() %}{{ k + 1 }}={{ v }};{% endfor %}",
     nullptr,
     "[(2, 'b'), (1, 'c')] dict_items([(2, 'b'), (1, 'c')]) dict_keys([2, 1]) dict_values(['b', "
     "'c']) [2, 1] 3=b;2=c;"},
    {"iteration yields the keys themselves",
     "{% for k in {1: 'a', 'x': 'b'} %}{{ k }}{{ k is number }},{% endfor %} {{ {1: 'a', 2: "
     "'b'}|join(',') }} {{ {1: 'a'}|first + 1 }} {{ {1: 'a', 2: 'b'}|max }} {{ {2: 'a', 1: "
     "'b'}|sort }}",
     nullptr, "1True,xFalse, 1,2 2 2 [1, 2]"},
    {"dictsort orders numbers numerically",
     "{% set d = {2: 'b', 10: 'a', 1: 'c'} %}{{ d|dictsort }} {{ d|dictsort(by='value') }} {{ "
     "d|dictsort(reverse=true) }} {{ {1.5: 'x', 1: 'y', True: 'z'}|dictsort }}",
     nullptr,
     "[(1, 'c'), (2, 'b'), (10, 'a')] [(10, 'a'), (2, 'b'), (1, 'c')] [(10, 'a'), (2, 'b'), (1, "
     "'c')] [(1, 'z'), (1.5, 'x')]"},
    {"dictsort lower-cases string keys only",
     "{{ {'b': 1, 'A': 2, 'a': 3}|dictsort }} {{ {'B': 1, 'a': 2}|dictsort }} {{ {'B': 1, 'a': "
     "2}|dictsort(true) }}",
     nullptr, "[('A', 2), ('a', 3), ('b', 1)] [('a', 2), ('B', 1)] [('B', 1), ('a', 2)]"},
    {"tojson writes keys as strings",
     "{{ {10: 1, 9: 2, 'a': 3}|tojson }} {{ {10: 1, 9: 2}|tojson(sort_keys=true) }} {{ {1.5: 1, "
     "True: 2, None: 3, 2: 4, 1e20: 5}|tojson }} {{ {3: {4: 5}}|tojson(indent=1) }}",
     nullptr,
     "{\"10\": 1, \"9\": 2, \"a\": 3} {\"9\": 2, \"10\": 1} {\"1.5\": 1, \"true\": 2, \"null\": 3, "
     "\"2\": 4, \"1e+20\": 5} {\n \"3\": {\n  \"4\": 5\n }\n}"},
    {"equality compares keys as Python",
     "{{ {1: 2} == {1.0: 2} }} {{ {1: 2} == {'1': 2} }} {{ {True: 2} == {1: 2} }} {{ {1: 2, 'a': "
     "3} == {'a': 3, 1: 2} }}",
     nullptr, "True False True True"},
    {"attribute access reads string keys only",
     "{% set d = {1: 'a', 'x': 'b'} %}{{ d.x }} {{ d[1] }} {{ d['x'] }} [{{ d['1'] }}] {{ d|string "
     "}} {{ {1: {2: 'x'}} }}",
     nullptr, "b a b [] {1: 'a', 'x': 'b'} {1: {2: 'x'}}"},
    {"namespace and dict()",
     "{% set ns = namespace({1: 2, 'a': 3}) %}{{ ns.a }} {{ ns }} {{ dict([(1, 'a'), (2, 'b')]) }} "
     "{{ dict({3: 4}, x=1) }} {{ dict([(none, 1)]) }}",
     nullptr, "3 <Namespace {1: 2, 'a': 3}> {1: 'a', 2: 'b'} {3: 4, 'x': 1} {None: 1}"},
    {"attribute paths index int keys",
     "{% set rows = [{0: 'zero', 'n': 1}, {0: 'nil', 'n': 2}] %}{{ rows|map(attribute='0')|list }} "
     "{{ rows|selectattr('0', 'equalto', 'nil')|map(attribute='n')|list }} {{ "
     "rows|sort(attribute='0')|map(attribute='n')|list }}",
     nullptr, "['zero', 'nil'] [2] [2, 1]"},
    {"unique compares keys as Python", "{{ [1, 1.0, True, '1']|unique|list }}", nullptr,
     "[1, '1']"},
    {"undefined and markup keys",
     "{{ {undefined_x: 1} }} {{ {'a'|safe: 1}['a'] }} {{ 'a' in {'a'|safe: 1} }}", nullptr,
     "{Undefined: 1} 1 True"},
};

TEST(TemplateDictKeys, MatchJinja2) {
  test::expect_cases_render(kDictKeyCases);
}

TEST(TemplateDictKeys, UnhashableKeysAreErrors) {
  EXPECT_THAT(test::render_error("{{ {[1]: 1} }}"),
              ::testing::HasSubstr("unhashable type: 'list'"));
  EXPECT_THAT(test::render_error("{{ {(1, [2]): 1} }}"),
              ::testing::HasSubstr("unhashable type: 'list'"));
  EXPECT_THAT(test::render_error("{% set x = {'a': 1} %}{{ {x: 1} }}"),
              ::testing::HasSubstr("unhashable type: 'dict'"));
  EXPECT_THAT(test::render_error("{{ [1] in {1: 2} }}"),
              ::testing::HasSubstr("unhashable type: 'list'"));
  EXPECT_THAT(test::render_error("{{ {1: 2}.get([1]) }}"),
              ::testing::HasSubstr("unhashable type: 'list'"));
  EXPECT_THAT(test::render_error("{{ dict([([1], 2)]) }}"),
              ::testing::HasSubstr("unhashable type: 'list'"));
  // A subscript looks up as Jinja2's getitem does, which turns Python's TypeError into undefined.
  EXPECT_EQ(test::render_text("{{ {1: 2}[[1]] }}x"), "x");
}

TEST(TemplateDictKeys, MixedKeysDoNotOrder) {
  EXPECT_THAT(test::render_error("{{ {2: 'b', 'a': 'a'}|dictsort }}"),
              ::testing::HasSubstr("'<' not supported between instances of 'str' and 'int'"));
  EXPECT_THAT(test::render_error("{{ {10: 1, 'a': 2}|tojson(sort_keys=true) }}"),
              ::testing::HasSubstr("'<' not supported between instances of 'str' and 'int'"));
}

TEST(TemplateDictKeys, JsonRefusesKeysItCannotWrite) {
  EXPECT_THAT(test::render_error("{{ {(1, 2): 1}|tojson }}"),
              ::testing::HasSubstr("keys must be str, int, float, bool or None, not tuple"));
  EXPECT_THAT(test::render_error("{{ {undefined_x: 1}|tojson }}"),
              ::testing::HasSubstr("keys must be str, int, float, bool or None, not Undefined"));
}

TEST(TemplateDictKeys, JsonVariablesStayStringKeyed) {
  // Keys that come from JSON are strings: "1" is not the key 1.
  EXPECT_EQ(
      test::render_text("{{ d['1'] }} [{{ d[1] }}] {{ 1 in d }} {{ d }}", R"({"d": {"1": "x"}})"),
      "x [] False {'1': 'x'}");
}

}  // namespace
}  // namespace sluice
