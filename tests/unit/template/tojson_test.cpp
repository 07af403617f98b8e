// The tojson filter as transformers defines it: json.dumps(x, ensure_ascii=False, indent=...,
// separators=..., sort_keys=...). Non-ASCII text stays UTF-8, floats print as Python's repr,
// and indenting switches the item separator to ",". Expected texts come from Jinja2 with that
// filter (see template_test_util.h).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/unit/template/template_test_util.h"

namespace sluice {
namespace {

using test::TemplateCase;

// The variables of every row whose variables are nullptr.
constexpr const char* kToJsonCasesVariables = R"json({
 "nested": {
  "k": [
   {
    "z": 1.0,
    "w": [
     true,
     false,
     null
    ]
   }
  ],
  "e": {},
  "a": [],
  "s": "é🙂 \u0001\"\\/<>&\t"
 },
 "args": {
  "location": "Paris, France",
  "unit": "°C",
  "days": 3,
  "ratio": 0.25
 },
 "tool": {
  "type": "function",
  "function": {
   "name": "get_weather",
   "description": "Get the weather",
   "parameters": {
    "type": "object",
    "properties": {
     "city": {
      "type": "string"
     }
    },
    "required": [
     "city"
    ]
   }
  }
 }
})json";

const TemplateCase kToJsonCases[] = {
    {"one line with Python separators", "{{ nested|tojson }}", nullptr,
     "{\"k\": [{\"z\": 1.0, \"w\": [true, false, null]}], \"e\": {}, \"a\": [], \"s\": "
     "\"é🙂 \\u0001\\\"\\\\/<>&\\t\"}"},
    {"unicode stays unescaped", "{{ args|tojson }}", nullptr,
     "{\"location\": \"Paris, France\", \"unit\": \"°C\", \"days\": 3, \"ratio\": 0.25}"},
    {"ensure_ascii escapes as Python does", "{{ nested.s|tojson(ensure_ascii=true) }}", nullptr,
     "\"\\u00e9\\ud83d\\ude42\\u2028\\u0001\\\"\\\\/<>&\\t\""},
    {"indent 2", "{{ nested|tojson(indent=2) }}", nullptr,
     "{\n  \"k\": [\n    {\n      \"z\": 1.0,\n      \"w\": [\n        true,\n        false,\n     "
     "   null\n      ]\n    }\n  ],\n  \"e\": {},\n  \"a\": [],\n  \"s\": "
     "\"é🙂 \\u0001\\\"\\\\/<>&\\t\"\n}"},
    {"indent 4 like Llama 3.1 tools", "{{ tool|tojson(indent=4) }}", nullptr,
     "{\n    \"type\": \"function\",\n    \"function\": {\n        \"name\": \"get_weather\",\n    "
     "    \"description\": \"Get the weather\",\n        \"parameters\": {\n            \"type\": "
     "\"object\",\n            \"properties\": {\n                \"city\": {\n                    "
     "\"type\": \"string\"\n                }\n            },\n            \"required\": [\n       "
     "         \"city\"\n            ]\n        }\n    }\n}"},
    {"indent as a string", "{{ args|tojson(indent='\\t') }}", nullptr,
     "{\n\t\"location\": \"Paris, France\",\n\t\"unit\": \"°C\",\n\t\"days\": 3,\n\t\"ratio\": "
     "0.25\n}"},
    {"sort_keys and separators",
     "{{ args|tojson(sort_keys=true) }} {{ args|tojson(separators=(',', ':')) }}", nullptr,
     "{\"days\": 3, \"location\": \"Paris, France\", \"ratio\": 0.25, \"unit\": \"°C\"} "
     "{\"location\":\"Paris, France\",\"unit\":\"°C\",\"days\":3,\"ratio\":0.25}"},
    {"scalars",
     "{{ 'é'|tojson }} {{ 1.0|tojson }} {{ [1.0, 2.5, 1e20, -0.0, 1e-7]|tojson }} {{ none|tojson "
     "}} {{ true|tojson }} {{ (1, 'a')|tojson }} {{ 12345678901234|tojson }}",
     nullptr, "\"é\" 1.0 [1.0, 2.5, 1e+20, -0.0, 1e-07] null true [1, \"a\"] 12345678901234"},
};

TEST(TemplateToJson, MatchesTransformers) {
  test::expect_cases_render(kToJsonCases, kToJsonCasesVariables);
}

TEST(TemplateToJson, ValuesJsonCannotHoldAreErrors) {
  EXPECT_THAT(test::render_error("{{ missing|tojson }}"),
              ::testing::HasSubstr("Object of type Undefined is not JSON serializable"));
  EXPECT_THAT(test::render_error("{{ namespace(a=1)|tojson }}"),
              ::testing::HasSubstr("Object of type Namespace is not JSON serializable"));
}

TEST(TemplateToJson, DeeplyNestedVariablesAreRefusedNotCrashed) {
  std::string nested;
  for (int i = 0; i < 2000; ++i) nested += "[";
  for (int i = 0; i < 2000; ++i) nested += "]";
  EXPECT_THAT(test::render_error("{{ x|tojson }}", "{\"x\": " + nested + "}"),
              ::testing::HasSubstr("nested more than"));
}

}  // namespace
}  // namespace sluice
