#include "engine/grammar/json_schema_grammar.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/core/error.h"
#include "tests/unit/grammar/grammar_test_support.h"

namespace sluice {
namespace {

using test::grammar_accepts;
using ::testing::HasSubstr;

bool schema_accepts(const std::string& schema, const std::string& text) {
  return grammar_accepts(json_schema_grammar(schema, "schema.json"), text);
}

std::string schema_error_of(const std::string& schema) {
  return test::error_message([&] { json_schema_grammar(schema, "schema.json"); });
}

TEST(JsonSchemaGrammar, ObjectWithRequiredAndOptionalInSchemaOrder) {
  std::string schema = R"({"type":"object","properties":{
      "name":{"type":"string"},"age":{"type":"integer"},"tags":{"type":"array","items":{"type":"string"}}},
      "required":["name","tags"]})";
  EXPECT_TRUE(schema_accepts(schema, R"({"name":"Ann","age":3,"tags":[]})"));
  EXPECT_TRUE(schema_accepts(schema, R"({"name":"Ann","tags":["a","b"]})"));
  EXPECT_TRUE(schema_accepts(schema, "{ \"name\": \"Ann\",\n  \"tags\": [ \"a\" ] }"));
  EXPECT_FALSE(schema_accepts(schema, R"({"tags":[],"name":"Ann"})"));  // schema order
  EXPECT_FALSE(schema_accepts(schema, R"({"name":"Ann"})"));            // tags required
  EXPECT_FALSE(schema_accepts(schema, R"({"name":"Ann","tags":[],"x":1})"));
  EXPECT_FALSE(schema_accepts(schema, R"({"name":"Ann","age":3.5,"tags":[]})"));
  EXPECT_FALSE(schema_accepts(schema, R"({"name":"Ann",,"tags":[]})"));
  // Whitespace is bounded.
  EXPECT_FALSE(schema_accepts(schema, "{\"name\":   \"Ann\",\"tags\":[]}"));
}

TEST(JsonSchemaGrammar, AllOptional) {
  std::string schema =
      R"({"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}}})";
  EXPECT_TRUE(schema_accepts(schema, "{}"));
  EXPECT_TRUE(schema_accepts(schema, R"({"b":1})"));
  EXPECT_TRUE(schema_accepts(schema, R"({"a":1,"b":2})"));
  EXPECT_FALSE(schema_accepts(schema, R"({,"b":1})"));
  EXPECT_FALSE(schema_accepts(schema, R"({"a":1,})"));
}

TEST(JsonSchemaGrammar, AdditionalProperties) {
  std::string schema = R"({"type":"object","properties":{"id":{"type":"integer"}},"required":["id"],
                           "additionalProperties":{"type":"boolean"}})";
  EXPECT_TRUE(schema_accepts(schema, R"({"id":1,"ok":true,"idx":false})"));
  EXPECT_TRUE(schema_accepts(schema, R"({"id":1,"i":true})"));
  EXPECT_FALSE(schema_accepts(schema, R"({"id":1,"id":true})"));  // extra key equal to a named one
  EXPECT_FALSE(schema_accepts(schema, R"({"id":1,"ok":3})"));
  EXPECT_TRUE(schema_accepts(R"({"additionalProperties":true})", R"({"x":[1,{"y":null}]})"));
}

TEST(JsonSchemaGrammar, StringsEnumsConstsAndFormats) {
  EXPECT_TRUE(schema_accepts(R"({"type":"string","minLength":2,"maxLength":3})", R"("ab")"));
  EXPECT_TRUE(schema_accepts(R"({"type":"string","minLength":2,"maxLength":3})", R"("жё😀")"));
  EXPECT_FALSE(schema_accepts(R"({"type":"string","minLength":2,"maxLength":3})", R"("abcd")"));
  EXPECT_FALSE(schema_accepts(R"({"type":"string","minLength":2})", R"("a")"));
  EXPECT_TRUE(schema_accepts(R"({"type":"string"})", R"("a\"b\\c\n\u00e9")"));
  EXPECT_FALSE(schema_accepts(R"({"type":"string"})", "\"a\nb\""));
  EXPECT_FALSE(schema_accepts(R"({"type":"string"})", R"("\ud800")"));
  EXPECT_TRUE(schema_accepts(R"({"enum":["red","green",3,null]})", R"("green")"));
  EXPECT_TRUE(schema_accepts(R"({"enum":["red","green",3,null]})", "null"));
  EXPECT_FALSE(schema_accepts(R"({"enum":["red","green",3,null]})", R"("blue")"));
  EXPECT_TRUE(schema_accepts(R"({"const":{"a":[1,"é"]}})", R"({"a":[1,"é"]})"));
  EXPECT_TRUE(schema_accepts(R"({"type":"string","format":"date"})", R"("2024-02-28")"));
  EXPECT_FALSE(schema_accepts(R"({"type":"string","format":"date"})", R"("2024-02-30")"));
  EXPECT_FALSE(schema_accepts(R"({"type":"string","format":"date"})", R"("2024-13-01")"));
  EXPECT_TRUE(schema_accepts(R"({"type":"string","format":"time"})", R"("23:59:01Z")"));
  EXPECT_TRUE(schema_accepts(R"({"type":"string","format":"date-time"})",
                             R"("2024-01-31T08:00:00.5+02:00")"));
  EXPECT_FALSE(
      schema_accepts(R"({"type":"string","format":"date-time"})", R"("2024-01-31 08:00:00Z")"));
  EXPECT_TRUE(schema_accepts(R"({"type":"string","format":"uuid"})",
                             R"("123e4567-e89b-12d3-a456-426614174000")"));
  EXPECT_FALSE(schema_accepts(R"({"type":"string","format":"uuid"})",
                              R"("123e4567e89b12d3a456426614174000")"));
  EXPECT_TRUE(
      schema_accepts(R"({"type":"string","format":"email"})", R"("ann.lee@mail.example.org")"));
  EXPECT_FALSE(schema_accepts(R"({"type":"string","format":"email"})", R"("ann@localhost")"));
  EXPECT_TRUE(schema_accepts(R"({"type":"string","pattern":"^[A-Z]{2}-\\d+$"})", R"("AB-12")"));
  EXPECT_FALSE(schema_accepts(R"({"type":"string","pattern":"^[A-Z]{2}-\\d+$"})", R"("AB-")"));
  EXPECT_TRUE(schema_accepts(R"({"type":"string","pattern":"^a\"b$"})", R"("a\"b")"));
}

TEST(JsonSchemaGrammar, IntegerBoundsAreExact) {
  struct Case {
    const char* schema;
    long lo, hi;  // the accepted range checked over [-1200, 1200]
  };
  const Case cases[] = {
      {R"({"type":"integer","minimum":0,"maximum":10})", 0, 10},
      {R"({"type":"integer","minimum":-37,"maximum":1034})", -37, 1034},
      {R"({"type":"integer","exclusiveMinimum":5,"exclusiveMaximum":100})", 6, 99},
      {R"({"type":"integer","minimum":1.5,"maximum":7.9})", 2, 7},
      {R"({"type":"integer","minimum":-999,"maximum":-10})", -999, -10},
      {R"({"type":"integer","minimum":18})", 18, 100000},
      {R"({"type":"integer","maximum":-3})", -100000, -3},
      {R"({"type":"integer","minimum":5,"exclusiveMinimum":true,"maximum":9})", 6, 9},
  };
  for (const Case& c : cases) {
    Grammar g = json_schema_grammar(c.schema, "schema.json");
    for (long v = -1200; v <= 1200; ++v) {
      bool expected = v >= c.lo && v <= c.hi;
      ASSERT_EQ(grammar_accepts(g, std::to_string(v)), expected) << c.schema << " value " << v;
    }
    EXPECT_FALSE(grammar_accepts(g, "007")) << c.schema;
    EXPECT_FALSE(grammar_accepts(g, "-0")) << c.schema;
  }
  EXPECT_THAT(schema_error_of(R"({"type":"integer","minimum":5,"maximum":4})"),
              HasSubstr("no integer lies within the bounds"));
}

TEST(JsonSchemaGrammar, NumberBoundsHoldForEveryValueWritten) {
  Grammar g = json_schema_grammar(R"({"type":"number","minimum":-2.5,"exclusiveMaximum":3})", "s");
  EXPECT_TRUE(grammar_accepts(g, "-2"));
  EXPECT_TRUE(grammar_accepts(g, "-1.75"));
  EXPECT_TRUE(grammar_accepts(g, "2.999"));
  EXPECT_TRUE(grammar_accepts(g, "0.5"));
  EXPECT_TRUE(grammar_accepts(g, "-0.5"));
  EXPECT_FALSE(grammar_accepts(g, "3"));
  EXPECT_FALSE(grammar_accepts(g, "3.0"));
  EXPECT_FALSE(grammar_accepts(g, "-3"));
  EXPECT_FALSE(grammar_accepts(g, "-2.6"));
  EXPECT_FALSE(grammar_accepts(g, "2.50"));  // a fraction ends in a nonzero digit
  EXPECT_FALSE(grammar_accepts(g, "1e2"));
  Grammar unit = json_schema_grammar(R"({"type":"number","minimum":0,"maximum":1})", "s");
  EXPECT_TRUE(grammar_accepts(unit, "0"));
  EXPECT_TRUE(grammar_accepts(unit, "1"));
  EXPECT_TRUE(grammar_accepts(unit, "0.25"));
  EXPECT_FALSE(grammar_accepts(unit, "1.5"));
  EXPECT_FALSE(grammar_accepts(unit, "-0.1"));
}

TEST(JsonSchemaGrammar, ArraysPrefixItemsAndCounts) {
  std::string list = R"({"type":"array","items":{"type":"integer"},"minItems":1,"maxItems":3})";
  EXPECT_FALSE(schema_accepts(list, "[]"));
  EXPECT_TRUE(schema_accepts(list, "[1]"));
  EXPECT_TRUE(schema_accepts(list, "[1, 2, 3]"));
  EXPECT_FALSE(schema_accepts(list, "[1,2,3,4]"));
  std::string tuple = R"({"type":"array","prefixItems":[{"type":"string"},{"type":"integer"}],
                          "minItems":2,"maxItems":2})";
  EXPECT_TRUE(schema_accepts(tuple, R"(["a",1])"));
  EXPECT_FALSE(schema_accepts(tuple, R"(["a"])"));
  EXPECT_FALSE(schema_accepts(tuple, R"([1,"a"])"));
  std::string open =
      R"({"type":"array","prefixItems":[{"type":"string"}],"items":{"type":"boolean"}})";
  EXPECT_TRUE(schema_accepts(open, "[]"));
  EXPECT_TRUE(schema_accepts(open, R"(["a",true,false])"));
  EXPECT_FALSE(schema_accepts(open, R"(["a","b"])"));
  std::string closed = R"({"type":"array","prefixItems":[{"type":"string"}],"items":false})";
  EXPECT_FALSE(schema_accepts(closed, R"(["a",true])"));
}

TEST(JsonSchemaGrammar, UnionsRefsAndRecursion) {
  std::string schema = R"({
    "$defs": {
      "Node": {"type":"object","properties":{"value":{"type":"integer"},
               "children":{"type":"array","items":{"$ref":"#/$defs/Node"}}},
               "required":["value","children"]},
      "Pet": {"oneOf":[{"type":"object","properties":{"kind":{"const":"cat"}},"required":["kind"]},
                        {"type":"object","properties":{"kind":{"const":"dog"},"barks":{"type":"boolean"}},"required":["kind"]}]}
    },
    "type":"object",
    "properties":{
      "tree":{"$ref":"#/$defs/Node"},
      "pet":{"anyOf":[{"$ref":"#/$defs/Pet"},{"type":"null"}],"default":null},
      "note":{"type":["string","null"]},
      "score":{"type":"number","nullable":true},
      "wrapped":{"allOf":[{"$ref":"#/$defs/Pet"}],"description":"pydantic v1 style"}
    },
    "required":["tree"]})";
  EXPECT_TRUE(
      schema_accepts(schema, R"({"tree":{"value":1,"children":[{"value":2,"children":[]}]}})"));
  EXPECT_TRUE(schema_accepts(
      schema,
      R"({"tree":{"value":1,"children":[]},"pet":{"kind":"dog","barks":true},"note":null,"score":2})"));
  EXPECT_FALSE(schema_accepts(schema, R"({"tree":{"value":1,"children":[]},"score":null})"));
  EXPECT_TRUE(schema_accepts(
      schema,
      R"({"tree":{"value":1,"children":[]},"pet":null,"note":"x","score":1.5,"wrapped":{"kind":"cat"}})"));
  EXPECT_FALSE(schema_accepts(schema, R"({"tree":{"value":1}})"));
  EXPECT_FALSE(
      schema_accepts(schema, R"({"tree":{"value":1,"children":[]},"pet":{"kind":"cow"}})"));
  EXPECT_TRUE(
      schema_accepts(R"({"definitions":{"A":{"type":"integer"}},"$ref":"#/definitions/A"})", "7"));
  EXPECT_TRUE(schema_accepts(R"({"type":"array","items":{"$ref":"#"}})", "[[],[[]]]"));
}

TEST(JsonSchemaGrammar, FreeJson) {
  Grammar g = json_object_grammar();
  EXPECT_TRUE(grammar_accepts(g, R"({"a":[1,2.5e3,-0.1,true,null,{"b":"ж"}]})"));
  EXPECT_FALSE(grammar_accepts(g, "[1]"));
  EXPECT_FALSE(grammar_accepts(g, R"({"a":01})"));
  EXPECT_FALSE(grammar_accepts(g, R"({"a":1)"));
  EXPECT_TRUE(schema_accepts("{}", "[1,\"x\"]"));
  EXPECT_TRUE(schema_accepts("true", "false"));
}

TEST(JsonSchemaGrammar, RefusesUnsupportedKeywordsNamingThePointer) {
  EXPECT_THAT(schema_error_of(R"({"type":"object","if":{"required":["a"]}})"),
              HasSubstr("schema.json: /if: unsupported keyword 'if'"));
  EXPECT_THAT(
      schema_error_of(
          R"({"type":"object","properties":{"a/b":{"type":"string","unevaluatedProperties":false}}})"),
      HasSubstr(
          "/properties/a~1b/unevaluatedProperties: unsupported keyword 'unevaluatedProperties'"));
  EXPECT_THAT(schema_error_of(R"({"type":"array","items":{"type":"number","multipleOf":0.5}})"),
              HasSubstr("/items/multipleOf: unsupported keyword 'multipleOf'"));
  EXPECT_THAT(schema_error_of(R"({"type":"string","format":"uri","maxLength":7})"),
              HasSubstr("/format: no string of format 'uri' with a length"));
  EXPECT_THAT(schema_error_of(R"({"type":"string","format":"date","pattern":"^2"})"),
              HasSubstr("/format: 'format' with 'pattern' is not supported"));
  // maxContains bounds the matching items whatever minContains says (0 included).
  EXPECT_THAT(schema_error_of(R"({"contains":{"const":1},"minContains":0,"maxContains":0})"),
              HasSubstr("/maxContains: unsupported keyword 'maxContains'"));
  EXPECT_THAT(schema_error_of(R"({"$ref":"#/$defs/Missing"})"),
              HasSubstr("/$ref: reference '#/$defs/Missing' does not resolve"));
  EXPECT_THAT(schema_error_of(R"({"$ref":"http://x/y.json"})"), HasSubstr("only local references"));
  EXPECT_THAT(schema_error_of(R"({"type":"strin"})"), HasSubstr("/type: unknown type 'strin'"));
  EXPECT_THAT(schema_error_of(R"({"type":"string","pattern":"(a)\\1"})"),
              HasSubstr("/pattern: regular expression, column 4: backreference"));
  EXPECT_THAT(schema_error_of("{\"type\": }"), HasSubstr("schema.json: not valid JSON at line 1"));
  std::string nested;
  for (int i = 0; i < 80; ++i) nested += R"({"type":"array","items":)";
  nested += "{}" + std::string(80, '}');
  EXPECT_THAT(schema_error_of(nested), HasSubstr("schema nested deeper than 64"));
}

}  // namespace
}  // namespace sluice
