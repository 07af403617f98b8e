#include "engine/input/column_template.h"

#include <gtest/gtest.h>

#include "engine/core/error.h"
#include "tests/unit/input/dataset_test_util.h"

namespace sluice {
namespace {

using Json = nlohmann::ordered_json;

std::string render(const std::string& text, const char* fields_json) {
  return ColumnTemplate::parse(text).render(Json::parse(fields_json));
}

// Returns the Error message of parsing text, or "" when it parses.
std::string parse_error(const std::string& text) {
  try {
    ColumnTemplate::parse(text);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(ColumnTemplate, OptionalSectionIsDroppedWhenItsFieldIsMissingOrEmpty) {
  const std::string alpaca = "{instruction}[\n\n{input}]";
  EXPECT_EQ(render(alpaca, R"({"instruction": "Sort these", "input": "3, 1, 2"})"),
            "Sort these\n\n3, 1, 2");
  EXPECT_EQ(render(alpaca, R"({"instruction": "Tell a joke", "input": ""})"), "Tell a joke");
  EXPECT_EQ(render(alpaca, R"({"instruction": "Tell a joke", "input": "  \n"})"), "Tell a joke");
  EXPECT_EQ(render(alpaca, R"({"instruction": "Tell a joke"})"), "Tell a joke");
  EXPECT_EQ(render(alpaca, R"({"instruction": "Tell a joke", "input": null})"), "Tell a joke");
  // A section with two fields needs both.
  EXPECT_EQ(render("Q: {q}[ (from {a} in {b})]", R"({"q": "x", "a": "A"})"), "Q: x");
  EXPECT_EQ(render("Q: {q}[ (from {a} in {b})]", R"({"q": "x", "a": "A", "b": "B"})"),
            "Q: x (from A in B)");
}

TEST(ColumnTemplate, RequiredFieldErrorsNameTheField) {
  const auto tmpl = ColumnTemplate::parse("{instruction}[\n\n{input}]");
  try {
    tmpl.render(Json::parse(R"({"input": "x"})"));
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("field \"instruction\" is missing"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(tmpl.render(Json::array()), Error);
}

// An empty required field is not an error: an empty prompt is a prompt of BOS alone.
TEST(ColumnTemplate, EmptyRequiredFieldRendersEmpty) {
  EXPECT_EQ(render("{prompt}", R"({"prompt": ""})"), "");
  EXPECT_EQ(render("Q: {q}[ ({hint})]", R"({"q": " ", "hint": ""})"), "Q: ");
  EXPECT_EQ(render("[{a}]", R"({"b": 1})"), "");
}

TEST(ColumnTemplate, LiteralBracesAndBrackets) {
  EXPECT_EQ(render("{{\"q\": \"{q}\"}} [[{n}]]", R"({"q": "v", "n": 3})"), "{\"q\": \"v\"} [3]");
  EXPECT_EQ(render("{{q}}", R"({})"), "{q}");
  EXPECT_EQ(render("[x[[{a}]]]", R"({"a": "A"})"), "x[A]");
  EXPECT_EQ(render("[x[[{a}]]]", R"({})"), "");  // the section is dropped
}

TEST(ColumnTemplate, NonStringValuesAreJson) {
  EXPECT_EQ(render("{n} {f} {b} {list} {obj}",
                   R"({"n": 42, "f": 0.5, "b": false, "list": [1, "two"], "obj": {"k": 1}})"),
            "42 0.5 false [1,\"two\"] {\"k\":1}");
  EXPECT_EQ(render("[{n}]", R"({"n": 0})"), "0");  // zero is a value, not an empty field
}

TEST(ColumnTemplate, NewlinesAndUnicodePassThrough) {
  EXPECT_EQ(render("Задание: {instruction}\n\\n stays", R"({"instruction": "переведи"})"),
            "Задание: переведи\n\\n stays");
}

TEST(ColumnTemplate, SyntaxErrorsNameTheColumn) {
  EXPECT_NE(parse_error("abc {name").find("unclosed '{' at column 5"), std::string::npos);
  EXPECT_NE(parse_error("ab}c").find("unexpected '}' (write '}}' for a literal brace) at column 3"),
            std::string::npos);
  EXPECT_NE(parse_error("x {} y").find("empty field name '{}' at column 3"), std::string::npos);
  EXPECT_NE(parse_error("{a{b}}").find("'{' inside a field name at column 3"), std::string::npos);
  EXPECT_NE(parse_error("[a [b]]x]").find("'[' inside an optional section"), std::string::npos);
  EXPECT_NE(parse_error("{a} ] x").find("unexpected ']' (write ']]' for a literal bracket) at "
                                        "column 5"),
            std::string::npos);
  EXPECT_NE(parse_error("{a}\n[{b}").find("unclosed '[' at column 5"), std::string::npos);
  // Columns count characters, not bytes.
  EXPECT_NE(parse_error("ёж}").find("at column 3"), std::string::npos) << parse_error("ёж}");
  EXPECT_EQ(parse_error(""), "");
}

TEST(ColumnTemplate, FieldNamesInFirstUseOrder) {
  const auto tmpl = ColumnTemplate::parse("{b}[ {a}] {b} {c d} {{e}}");
  EXPECT_EQ(tmpl.field_names(), (std::vector<std::string>{"b", "a", "c d"}));
  EXPECT_EQ(tmpl.render(Json::parse(R"({"b": "B", "c d": "C"})")), "B B C {e}");
}

FieldInfo field(const std::string& name, size_t num_non_empty = 1, size_t num_strings = 1) {
  FieldInfo info;
  info.name = name;
  info.num_present = 1;
  info.num_non_empty = num_non_empty;
  info.num_strings = num_strings;
  return info;
}

TEST(ColumnTemplate, Defaults) {
  EXPECT_EQ(default_column_template(DatasetFormat::Json,
                                    {field("instruction"), field("input", 0), field("output")}),
            "{instruction}[\n\n{input}]");
  EXPECT_EQ(default_column_template(DatasetFormat::Csv, {field("Input"), field("Instruction")}),
            "{Instruction}[\n\n{Input}]");
  EXPECT_EQ(default_column_template(DatasetFormat::Jsonl,
                                    {field("id"), field("instruction"), field("instances", 1, 0)}),
            "{instruction}");
  EXPECT_EQ(default_column_template(DatasetFormat::Jsonl, {field("id"), field("prompt")}),
            "{prompt}");
  EXPECT_EQ(default_column_template(DatasetFormat::Text, {field("text")}), "{text}");
  EXPECT_EQ(default_column_template(DatasetFormat::Csv, {field("answer"), field("question")}),
            "{question}");
  EXPECT_EQ(default_column_template(DatasetFormat::Jsonl,
                                    {field("n", 1, 0), field("empty", 0), field("body")}),
            "{body}");
  EXPECT_EQ(default_column_template(DatasetFormat::Jsonl, {field("n", 1, 0)}), "");
  EXPECT_EQ(default_column_template(DatasetFormat::ShareGpt, {field("conversations")}), "");
  EXPECT_EQ(default_column_template(DatasetFormat::OpenAiChat, {field("prompt")}), "");
}

TEST(ColumnTemplate, DefaultsOnSharedFilesRender) {
  const std::string alpaca = test::shared_path("datasets/en/alpaca_5000.json");
  const std::string tmpl_text =
      default_column_template(DatasetFormat::Json, discover_fields(alpaca, DatasetFormat::Json));
  EXPECT_EQ(tmpl_text, "{instruction}[\n\n{input}]");
  const auto tmpl = ColumnTemplate::parse(tmpl_text);
  const auto outcome = test::read_all(alpaca);
  ASSERT_EQ(outcome.rows.size(), 5000u);
  EXPECT_EQ(tmpl.render(outcome.rows[0].fields),
            "Are the two sentences below grammatically correct? Output yes or no.\n\n"
            "Sentence 1: I am going to the store.\nSentence 2: I goes to the store.");
  EXPECT_EQ(tmpl.render(outcome.rows[4999].fields), "What year did the Great Recession start in?");
  for (const DatasetRow& row : outcome.rows) EXPECT_NO_THROW(tmpl.render(row.fields));
}

}  // namespace
}  // namespace sluice
