// Filters and globals that iterate their input, given a string (its characters) or a mapping
// (its keys). Those inputs are iterated through a list made for the call, which must live as
// long as the loop over it: these cases read freed memory when it does not (AddressSanitizer
// stops them), and a model's chat template can reach any of them. Expected texts come from
// Jinja2 (see template_test_util.h).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/unit/template/template_test_util.h"

namespace sluice {
namespace {

using test::TemplateCase;
using ::testing::HasSubstr;

constexpr const char* kVariables = R"json({"s": "abc", "d": {"b": 2, "a": 1}, "u": "héllo"})json";

const TemplateCase kStringAndMappingCases[] = {
    {"join a string", "{{ 'abc'|join('-') }}|{{ u|join(',') }}", nullptr, "a-b-c|h,é,l,l,o"},
    {"join a mapping", "{{ d|join('-') }}", nullptr, "b-a"},
    {"join with an attribute", "{{ s|join(attribute='0') }}|{{ d|join('+', attribute='0') }}",
     nullptr, "abc|b+a"},
    {"map a filter", "{{ s|map('upper')|join }}|{{ d|map('upper')|join }}", nullptr, "ABC|BA"},
    {"map an attribute", "{{ s|map(attribute='0')|join }}|{{ d|map(attribute='0')|join }}", nullptr,
     "abc|ba"},
    {"unique", "{{ 'abca'|unique|join }}|{{ 'aBcAb'|unique|join }}|{{ d|unique|join }}", nullptr,
     "abc|aBc|ba"},
    {"select", "{{ s|select|join }}|{{ d|select('equalto', 'a')|join }}", nullptr, "abc|a"},
    {"reject", "{{ s|reject('equalto', 'b')|join }}|{{ d|reject('equalto', 'a')|join }}", nullptr,
     "ac|b"},
    {"selectattr", "{{ s|selectattr('upper')|list }}|{{ d|selectattr('upper')|list }}", nullptr,
     "['a', 'b', 'c']|['b', 'a']"},
    {"rejectattr", "{{ s|rejectattr('upper')|list }}|{{ d|rejectattr('upper')|list }}", nullptr,
     "[]|[]"},
    {"reverse", "{{ s|reverse }}|{{ d|reverse|join }}", nullptr, "cba|ab"},
    {"batch", "{{ 'abcde'|batch(2)|list }}|{{ d|batch(1)|list }}|{{ 'abc'|batch(2, 'x')|list }}",
     nullptr, "[['a', 'b'], ['c', 'd'], ['e']]|[['b'], ['a']]|[['a', 'b'], ['c', 'x']]"},
    {"list, first, last", "{{ s|list }}{{ d|list }}{{ s|first }}{{ s|last }}{{ d|first }}", nullptr,
     "['a', 'b', 'c']['b', 'a']acb"},
    {"min, max, sort", "{{ 'bca'|min }}{{ 'bca'|max }}{{ d|min }}{{ d|max }}{{ 'bca'|sort|join }}",
     nullptr, "acababc"},
    {"length", "{{ d|length }}{{ s|count }}", nullptr, "23"},
    {"dict of a mapping", "{{ dict(d, c=3) }}|{{ namespace(d).a }}", nullptr,
     "{'b': 2, 'a': 1, 'c': 3}|1"},
    {"dict of pairs", "{{ dict(d.items()) }}|{{ dict(['ab', 'cd']) }}", nullptr,
     "{'b': 2, 'a': 1}|{'a': 'b', 'c': 'd'}"},
    {"unpacking", "{% set a, b = 'xy' %}{{ b }}{{ a }}|{% set a, b = d %}{{ b }}{{ a }}", nullptr,
     "yx|ab"},
    {"loop over characters", "{% for c in u %}{{ loop.index }}{{ c }}{% endfor %}", nullptr,
     "1h2é3l4l5o"},
};

TEST(SequenceInputs, FiltersAndGlobalsIterateStringsAndMappings) {
  test::expect_cases_render(kStringAndMappingCases, kVariables);
}

TEST(SequenceInputs, SumOfAStringOrAMappingFailsAsPythonDoes) {
  EXPECT_THAT(test::render_error("{{ s|sum }}", kVariables),
              HasSubstr("unsupported operand type(s) for +: 'int' and 'str'"));
  EXPECT_THAT(test::render_error("{{ d|sum }}", kVariables),
              HasSubstr("unsupported operand type(s) for +: 'int' and 'str'"));
  EXPECT_THAT(test::render_error("{{ s|sum(start='') }}", kVariables),
              HasSubstr("sum() can't sum strings [use ''.join(seq) instead]"));
  EXPECT_EQ(test::render_text("{{ d.values()|sum }}|{{ [[1], [2]]|sum(start=[]) }}", kVariables),
            "3|[1, 2]");
}

TEST(SequenceInputs, DictOfAStringFailsCleanly) {
  EXPECT_THAT(test::render_error("{{ dict('ab') }}"),
              HasSubstr("dict() needs a mapping or a sequence of (key, value) pairs"));
}

}  // namespace
}  // namespace sluice
