// JSON Schema keywords beyond the OpenAI subset: enum/const beside other keywords, keywords
// without "type", ignored keywords and their notes, the draft-04..07 dialects, allOf merges,
// unions beside other keywords, object, array, string and number keywords.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/grammar/json_schema_grammar.h"
#include "tests/unit/grammar/grammar_test_support.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

// Whether the grammar of schema accepts text exactly.
bool coverage_accepts(const std::string& schema, const std::string& text) {
  return test::grammar_accepts(json_schema_grammar(schema, "s.json"), text);
}

std::string coverage_error(const std::string& schema) {
  return test::error_message([&] { json_schema_grammar(schema, "s.json"); });
}

std::vector<std::string> coverage_notes(const std::string& schema) {
  JsonSchemaNotes notes;
  json_schema_grammar(schema, "s.json", {}, &notes);
  return notes.lines();
}

TEST(JsonSchemaCoverage, EnumKeepsOnlyTheValuesItsSiblingsAccept) {
  std::string schema = R"({"type":"string","minLength":3,"enum":["a","abcd"]})";
  EXPECT_TRUE(coverage_accepts(schema, R"("abcd")"));
  EXPECT_FALSE(coverage_accepts(schema, R"("a")"));
  std::string typed = R"({"type":"string","enum":["a",1,null]})";
  EXPECT_TRUE(coverage_accepts(typed, R"("a")"));
  EXPECT_FALSE(coverage_accepts(typed, "1"));
  EXPECT_FALSE(coverage_accepts(typed, "null"));
  std::string objects =
      R"({"enum":[{"a":1},{"a":"x"}],"properties":{"a":{"type":"integer"}},"required":["a"]})";
  EXPECT_TRUE(coverage_accepts(objects, R"({"a":1})"));
  EXPECT_FALSE(coverage_accepts(objects, R"({"a":"x"})"));
  // 2.0 is an integer; the value is written as the schema gives it.
  EXPECT_TRUE(coverage_accepts(R"({"type":"integer","enum":[2.0,2.5]})", "2.0"));
  EXPECT_FALSE(coverage_accepts(R"({"type":"integer","enum":[2.0,2.5]})", "2.5"));
  // OpenAPI's nullable is no JSON Schema keyword (a validator rejects null): ignored, noted.
  EXPECT_FALSE(coverage_accepts(R"({"type":"string","enum":["a"],"nullable":true})", "null"));
  EXPECT_TRUE(coverage_accepts(R"({"type":"string","enum":["a"],"nullable":true})", R"("a")"));
  // JSON Schema's patterns search the value: "b" is found in "abc".
  std::string searched =
      R"({"type":"string","pattern":"b","maxLength":3,"enum":["abc","x","abcd"]})";
  EXPECT_TRUE(coverage_accepts(searched, R"("abc")"));
  EXPECT_FALSE(coverage_accepts(searched, R"("x")"));
  EXPECT_FALSE(coverage_accepts(searched, R"("abcd")"));
  // An upper bound past the grammar's repeat limit is lowered to it.
  EXPECT_TRUE(coverage_accepts(R"({"type":"string","maxLength":100000})", R"("ab")"));
}

TEST(JsonSchemaCoverage, UnsatisfiableEnumOrConstIsRefusedNamingItsPointer) {
  EXPECT_THAT(coverage_error(R"({"type":"integer","const":"no"})"),
              HasSubstr("s.json: /const: no value of 'const' satisfies the keywords beside it"));
  EXPECT_THAT(
      coverage_error(R"({"properties":{"p":{"type":"string","maxLength":1,"enum":["ab","cd"]}}})"),
      HasSubstr("/properties/p/enum: no value of 'enum' satisfies"));
  EXPECT_THAT(coverage_error(R"({"const":1,"enum":[2]})"), HasSubstr("/const: no value"));
}

TEST(JsonSchemaCoverage, KeywordsWithoutTypeConstrainOnlyTheirKind) {
  std::string items = R"({"minItems":2})";
  EXPECT_TRUE(coverage_accepts(items, "[1,2]"));
  EXPECT_FALSE(coverage_accepts(items, "[1]"));
  EXPECT_TRUE(coverage_accepts(items, R"("x")"));
  EXPECT_TRUE(coverage_accepts(items, "null"));
  EXPECT_TRUE(coverage_accepts(items, R"({"a":[1]})"));
  std::string length = R"({"maxLength":2,"minimum":0})";
  EXPECT_TRUE(coverage_accepts(length, R"("ab")"));
  EXPECT_FALSE(coverage_accepts(length, R"("abc")"));
  EXPECT_TRUE(coverage_accepts(length, "5"));
  EXPECT_FALSE(coverage_accepts(length, "-5"));
  std::string object = R"({"properties":{"a":{"type":"integer"}},"required":["a"]})";
  EXPECT_TRUE(coverage_accepts(object, R"({"a":1})"));
  EXPECT_FALSE(coverage_accepts(object, "{}"));
  EXPECT_TRUE(coverage_accepts(object, "[{}]"));
  std::string typed = R"({"type":["string","integer"],"minLength":2})";
  EXPECT_TRUE(coverage_accepts(typed, R"("ab")"));
  EXPECT_TRUE(coverage_accepts(typed, "5"));
  EXPECT_FALSE(coverage_accepts(typed, R"("a")"));
  EXPECT_FALSE(coverage_accepts(typed, "[]"));
}

TEST(JsonSchemaCoverage, UnknownKeywordsAreIgnoredAndListedOnce) {
  std::string schema = R"({"type":"object","x-order":1,"self":{"vendor":"v"},
      "properties":{"a":{"type":"string","markdownDescription":"m","_format":"x"},
                    "b":{"type":"string","format":"int32","$vocabulary":{}}},"required":["a"]})";
  EXPECT_TRUE(coverage_accepts(schema, R"({"a":"x","b":"y"})"));
  EXPECT_THAT(coverage_notes(schema),
              ::testing::UnorderedElementsAre(
                  "/x-order: unknown keyword ('x-order' ignored)",
                  "/self: unknown keyword ('self' ignored)",
                  "/properties/a/markdownDescription: unknown keyword "
                  "('markdownDescription' ignored)",
                  "/properties/a/_format: unknown keyword ('_format' ignored)",
                  "/properties/b/format: format 'int32' is not checked ('format' "
                  "ignored)"));
  // A definition reached twice is noted once.
  std::string twice = R"({"$defs":{"A":{"type":"integer","x-unit":"m"}},"type":"array",
      "prefixItems":[{"$ref":"#/$defs/A"},{"$ref":"#/$defs/A"}]})";
  EXPECT_EQ(coverage_notes(twice).size(), 1u);
  EXPECT_THAT(coverage_error(R"({"type":"object","if":{"required":["a"]},"then":{}})"),
              HasSubstr("s.json: /if: unsupported keyword 'if'"));
  EXPECT_THAT(coverage_error(R"({"type":"array","items":{"unevaluatedItems":false}})"),
              HasSubstr("/items/unevaluatedItems: unsupported keyword 'unevaluatedItems'"));
  EXPECT_THAT(coverage_error(R"({"$dynamicRef":"#node"})"),
              HasSubstr("/$dynamicRef: unsupported keyword '$dynamicRef'"));
}

TEST(JsonSchemaCoverage, DraftFourSpellings) {
  std::string schema = R"({"$schema":"http://json-schema.org/draft-04/schema#","id":"http://x/s",
      "definitions":{"N":{"type":"number","minimum":0,"exclusiveMinimum":true,"maximum":2,
                          "exclusiveMaximum":false}},
      "type":"object","properties":{"n":{"$ref":"#/definitions/N"}},"required":["n"]})";
  EXPECT_TRUE(coverage_accepts(schema, R"({"n":1})"));
  EXPECT_TRUE(coverage_accepts(schema, R"({"n":2})"));
  EXPECT_FALSE(coverage_accepts(schema, R"({"n":0})"));
  EXPECT_TRUE(coverage_notes(schema).empty());
  std::string closed = R"({"type":"array","items":[{"type":"string"},{"type":"integer"}],
                           "additionalItems":false})";
  EXPECT_TRUE(coverage_accepts(closed, R"(["a",1])"));
  EXPECT_TRUE(coverage_accepts(closed, R"(["a"])"));
  EXPECT_FALSE(coverage_accepts(closed, R"(["a",1,2])"));
  std::string open = R"({"type":"array","items":[{"type":"string"}],
                         "additionalItems":{"type":"boolean"}})";
  EXPECT_TRUE(coverage_accepts(open, R"(["a",true,false])"));
  EXPECT_FALSE(coverage_accepts(open, R"(["a",1])"));
  std::string dependencies = R"({"type":"object","properties":{"a":{"type":"integer"},
      "b":{"type":"integer"}},"dependencies":{"a":["b"]}})";
  EXPECT_TRUE(coverage_accepts(dependencies, R"({"a":1,"b":2})"));
  EXPECT_FALSE(coverage_accepts(dependencies, R"({"a":1})"));
  EXPECT_TRUE(coverage_accepts(dependencies, R"({"b":2})"));
  // The schema form is dependentSchemas (json_schema_dependent_test.cpp).
  EXPECT_FALSE(coverage_accepts(R"({"dependencies":{"a":{"required":["b"]}}})", R"({"a":1})"));
  EXPECT_TRUE(coverage_accepts(R"({"dependencies":{"a":{"required":["b"]}}})", R"({"a":1,"b":1})"));
}

TEST(JsonSchemaCoverage, RefSiblingsFollowTheDialect) {
  std::string modern = R"({"$defs":{"A":{"type":"integer"}},"$ref":"#/$defs/A","minimum":5})";
  EXPECT_TRUE(coverage_accepts(modern, "7"));
  EXPECT_FALSE(coverage_accepts(modern, "3"));
  std::string draft7 = R"({"$schema":"http://json-schema.org/draft-07/schema#",
      "definitions":{"A":{"type":"integer"}},"$ref":"#/definitions/A","minimum":5})";
  EXPECT_TRUE(coverage_accepts(draft7, "3"));
  EXPECT_THAT(coverage_notes(draft7),
              ::testing::ElementsAre(HasSubstr("/minimum: keywords beside '$ref' are ignored")));
}

TEST(JsonSchemaCoverage, TypeBesideUnionsAppliesToEachBranch) {
  std::string schema =
      R"({"type":"string","anyOf":[{"minLength":3},{"const":"x"},{"type":"integer"}]})";
  EXPECT_TRUE(coverage_accepts(schema, R"("abc")"));
  EXPECT_TRUE(coverage_accepts(schema, R"("x")"));
  EXPECT_FALSE(coverage_accepts(schema, R"("ab")"));
  EXPECT_FALSE(coverage_accepts(schema, "5"));
  std::string shared = R"({"type":"object","properties":{"kind":{"type":"string"}},
      "required":["kind"],"oneOf":[{"properties":{"kind":{"const":"a"}}},
                                   {"properties":{"kind":{"const":"b"}}}]})";
  EXPECT_TRUE(coverage_accepts(shared, R"({"kind":"b"})"));
  EXPECT_FALSE(coverage_accepts(shared, R"({"kind":"c"})"));
  EXPECT_FALSE(coverage_accepts(shared, "{}"));
  EXPECT_THAT(coverage_error(R"({"type":"string","anyOf":[{"type":"integer"},{"type":"null"}]})"),
              HasSubstr("/anyOf: no branch of 'anyOf' is compatible"));
}

TEST(JsonSchemaCoverage, AllOfMergesIntoOneSchema) {
  std::string objects = R"({"allOf":[
      {"type":"object","properties":{"a":{"type":"string"}},"required":["a"]},
      {"properties":{"b":{"type":"integer","minimum":0}},"required":["b"]}]})";
  EXPECT_TRUE(coverage_accepts(objects, R"({"a":"x","b":1})"));
  EXPECT_FALSE(coverage_accepts(objects, R"({"a":"x"})"));
  EXPECT_FALSE(coverage_accepts(objects, R"({"a":"x","b":-1})"));
  std::string bounds =
      R"({"allOf":[{"type":"integer","minimum":0},{"maximum":10},{"minimum":5,"type":"number"}]})";
  for (int v = -3; v <= 13; ++v) {
    EXPECT_EQ(coverage_accepts(bounds, std::to_string(v)), v >= 5 && v <= 10) << v;
  }
  EXPECT_FALSE(coverage_accepts(bounds, "7.5"));
  std::string refs = R"({"$defs":{"Base":{"type":"object","properties":{"id":{"type":"integer"}},
      "required":["id"]}},"allOf":[{"$ref":"#/$defs/Base"},
      {"properties":{"name":{"type":"string","minLength":1,"maxLength":4}}}]})";
  EXPECT_TRUE(coverage_accepts(refs, R"({"id":1,"name":"ab"})"));
  EXPECT_FALSE(coverage_accepts(refs, R"({"id":1,"name":"abcde"})"));
  EXPECT_THAT(coverage_error(R"({"allOf":[{"properties":{"a":{}},"additionalProperties":false},
                                           {"properties":{"b":{}},"required":["b"]}]})"),
              HasSubstr("required property 'b' can never be valid"));
  EXPECT_THAT(coverage_error(R"({"allOf":[{"pattern":"^a"},{"pattern":"b$"}]})"),
              HasSubstr("s.json: /allOf/1/pattern: 'allOf' gives two different 'pattern' values"));
}

TEST(JsonSchemaCoverage, PatternPropertiesAndPropertyNames) {
  std::string patterns = R"({"type":"object","patternProperties":{"^x-[a-z]+$":{"type":"integer"}},
                             "additionalProperties":false})";
  EXPECT_TRUE(coverage_accepts(patterns, R"({"x-ab":1,"x-c":2})"));
  EXPECT_FALSE(coverage_accepts(patterns, R"({"x-ab":"s"})"));
  EXPECT_FALSE(coverage_accepts(patterns, R"({"y":1})"));
  // A named property the pattern matches is checked by both.
  std::string named = R"({"properties":{"x-a":{"type":"number"},"n":{"type":"string"}},
                          "patternProperties":{"^x-":{"type":"integer"}}})";
  EXPECT_TRUE(coverage_accepts(named, R"({"x-a":2,"n":"v"})"));
  EXPECT_FALSE(coverage_accepts(named, R"({"x-a":1.5})"));
  std::string names = R"({"type":"object","propertyNames":{"pattern":"^[a-z]{2}$"},
                          "additionalProperties":{"type":"integer"}})";
  EXPECT_TRUE(coverage_accepts(names, R"({"ab":1,"cd":2})"));
  EXPECT_FALSE(coverage_accepts(names, R"({"abc":1})"));
  std::string filtered = R"({"properties":{"ok":{"type":"integer"},"TOO_LONG":{"type":"integer"}},
                             "propertyNames":{"maxLength":3}})";
  EXPECT_TRUE(coverage_accepts(filtered, R"({"ok":1})"));
  EXPECT_FALSE(coverage_accepts(filtered, R"({"ok":1,"TOO_LONG":2})"));
}

TEST(JsonSchemaCoverage, PropertyCounts) {
  std::string map = R"({"type":"object","additionalProperties":{"type":"integer"},
                        "minProperties":1,"maxProperties":2})";
  EXPECT_FALSE(coverage_accepts(map, "{}"));
  EXPECT_TRUE(coverage_accepts(map, R"({"a":1})"));
  EXPECT_TRUE(coverage_accepts(map, R"({"a":1,"b":2})"));
  EXPECT_FALSE(coverage_accepts(map, R"({"a":1,"b":2,"c":3})"));
  std::string named =
      R"({"properties":{"a":{},"b":{},"c":{}},"minProperties":1,"maxProperties":2})";
  EXPECT_FALSE(coverage_accepts(named, "{}"));
  EXPECT_TRUE(coverage_accepts(named, R"({"a":1,"b":1})"));
  EXPECT_FALSE(coverage_accepts(named, R"({"a":1,"b":1,"c":1})"));
  EXPECT_THAT(coverage_error(R"({"required":["a","b"],"maxProperties":1})"),
              HasSubstr("/maxProperties: more properties are required"));
}

TEST(JsonSchemaCoverage, IntegerMultiples) {
  std::string free = R"({"type":"integer","multipleOf":3})";
  Grammar free_grammar = json_schema_grammar(free, "s.json");
  for (int v = -40; v <= 40; ++v) {
    EXPECT_EQ(test::grammar_accepts(free_grammar, std::to_string(v)), v % 3 == 0) << v;
  }
  EXPECT_TRUE(test::grammar_accepts(free_grammar, "123456789012"));
  EXPECT_FALSE(test::grammar_accepts(free_grammar, "-0"));
  Grammar bounded =
      json_schema_grammar(R"({"type":"number","multipleOf":5,"minimum":-12,"maximum":23})", "s");
  for (int v = -20; v <= 30; ++v) {
    EXPECT_EQ(test::grammar_accepts(bounded, std::to_string(v)), v % 5 == 0 && v >= -12 && v <= 23)
        << v;
  }
  EXPECT_THAT(coverage_error(R"({"type":"number","multipleOf":0.01})"),
              HasSubstr("/multipleOf: unsupported keyword 'multipleOf'"));
}

TEST(JsonSchemaCoverage, NotContainsAndUniqueItems) {
  EXPECT_TRUE(coverage_accepts(R"({"not":{"type":"string"}})", "1"));
  EXPECT_FALSE(coverage_accepts(R"({"not":{"type":"string"}})", R"("a")"));
  EXPECT_FALSE(coverage_accepts(R"({"type":["integer","null"],"not":{"type":"null"}})", "null"));
  EXPECT_THAT(coverage_error(R"({"type":"integer","not":{"enum":[1]}})"),
              HasSubstr("/not: unsupported keyword 'not'"));
  std::string contains = R"({"type":"array","items":{"type":"integer"},"contains":{"minimum":10}})";
  EXPECT_TRUE(coverage_accepts(contains, "[10,1]"));
  EXPECT_FALSE(coverage_accepts(contains, "[1]"));
  EXPECT_FALSE(coverage_accepts(contains, "[]"));
  std::string unique = R"({"type":"array","items":{"enum":["a","b","c"]},"uniqueItems":true})";
  EXPECT_TRUE(coverage_accepts(unique, "[]"));
  EXPECT_TRUE(coverage_accepts(unique, R"(["a","c"])"));
  EXPECT_TRUE(coverage_accepts(unique, R"(["a","b","c"])"));
  EXPECT_FALSE(coverage_accepts(unique, R"(["a","a"])"));
  std::string counted =
      R"({"type":"array","items":{"enum":["a","b","c"]},"uniqueItems":true,"minItems":2,"maxItems":2})";
  EXPECT_TRUE(coverage_accepts(counted, R"(["b","c"])"));
  EXPECT_FALSE(coverage_accepts(counted, R"(["b"])"));
  EXPECT_FALSE(coverage_accepts(counted, R"(["a","b","c"])"));
  EXPECT_THAT(coverage_error(R"({"type":"array","items":{"type":"string"},"uniqueItems":true})"),
              HasSubstr("/uniqueItems: unsupported keyword 'uniqueItems'"));
}

TEST(JsonSchemaCoverage, Formats) {
  auto accepts_format = [](const char* format, const char* text) {
    return coverage_accepts(std::string(R"({"type":"string","format":")") + format + "\"}",
                            std::string("\"") + text + "\"");
  };
  EXPECT_TRUE(accepts_format("ipv4", "192.168.0.1"));
  EXPECT_FALSE(accepts_format("ipv4", "256.1.1.1"));
  EXPECT_FALSE(accepts_format("ipv4", "01.1.1.1"));
  EXPECT_TRUE(accepts_format("ipv6", "2001:db8:0:0:0:0:2:1"));
  EXPECT_FALSE(accepts_format("ipv6", "2001:db8::1:2:3:4:5:6:7"));
  EXPECT_TRUE(accepts_format("hostname", "api.example.com"));
  EXPECT_FALSE(accepts_format("hostname", "-bad.com"));
  // Labels of every length up to 32, hyphens inside, but never "--" as the third and fourth
  // characters: an IDNA A-label is a hostname only when it decodes to valid IDNA 2008 text.
  for (const char* label : {"a", "ab", "a-b", "ab-c", "a--b", "abc--d", "a-b-c-d",
                            "abcdefghijklmnopqrstuvwxyz012345"}) {
    EXPECT_TRUE(accepts_format("hostname", label)) << label;
  }
  for (const char* label :
       {"xn--hello-txk", "ab--c", "ab--", "a-", "abcdefghijklmnopqrstuvwxyz0123456"})
    EXPECT_FALSE(accepts_format("hostname", label)) << label;
  EXPECT_FALSE(accepts_format("hostname", "example.xn--9t4b11yi5a"));
  EXPECT_TRUE(accepts_format("uri", "https://example.com/a/b"));
  EXPECT_FALSE(accepts_format("uri", "example"));
  EXPECT_TRUE(accepts_format("duration", "P3Y6M4DT12H30M5S"));
  EXPECT_TRUE(accepts_format("duration", "P2W"));
  EXPECT_TRUE(accepts_format("duration", "PT5M"));
  EXPECT_FALSE(accepts_format("duration", "PT"));
  EXPECT_FALSE(accepts_format("duration", "P1Y2D"));
}

}  // namespace
}  // namespace sluice
