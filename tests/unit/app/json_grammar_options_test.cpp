// The JSON grammar options of a job (--schema-mode, --json-whitespace): kept in the job spec
// only when not the defaults (older job files read the same), read back as written, and given to
// every JSON grammar the job makes: its own, each row's schema, each batch line's structure (a
// line's own schema_mode / json_whitespace win).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "app/batch_request.h"
#include "app/generation_spec.h"
#include "app/grammar_notes.h"
#include "app/row_schemas.h"
#include "engine/core/error.h"
#include "engine/jobs/job_info.h"

namespace sluice {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using OrderedJson = nlohmann::ordered_json;

constexpr JsonGrammarOptions kLooseCompact{.whitespace = JsonWhitespace::Compact,
                                           .mode = SchemaMode::BestEffort};

GenerationSpec spec_with_schema_grammar() {
  GenerationSpec spec;
  spec.input_path = "in.jsonl";
  spec.sampling.grammar = std::make_shared<const GrammarSource>(
      GrammarSource{GrammarSourceKind::JsonSchema, "s.json", R"({"type":"integer"})", {}});
  return spec;
}

// Catches a job file that grows keys for the defaults (older Sluice versions read those files),
// and options lost on the way back (a resumed job would compile another grammar).
TEST(JsonGrammarOptionsSpec, DefaultsAreNotWrittenAndSetOptionsReadBack) {
  GenerationSpec spec = spec_with_schema_grammar();
  const OrderedJson plain = spec_to_json(spec);
  const std::string plain_text = plain.dump();
  EXPECT_EQ(plain_text.find("schema_mode"), std::string::npos) << plain_text;
  EXPECT_EQ(plain_text.find("json_whitespace"), std::string::npos) << plain_text;
  const GenerationSpec plain_back = spec_from_json(plain);
  EXPECT_EQ(plain_back.json_grammar, JsonGrammarOptions{});
  EXPECT_EQ(*plain_back.sampling.grammar, *spec.sampling.grammar);

  spec.json_grammar = kLooseCompact;
  spec.sampling.grammar = std::make_shared<const GrammarSource>(
      with_json_options(*spec.sampling.grammar, spec.json_grammar));
  const OrderedJson set = spec_to_json(spec);
  EXPECT_EQ(set["schema_mode"], "best-effort");
  EXPECT_EQ(set["json_whitespace"], "compact");
  EXPECT_EQ(set["grammar"]["schema_mode"], "best-effort");
  EXPECT_EQ(set["grammar"]["json_whitespace"], "compact");
  const GenerationSpec back = spec_from_json(set);
  EXPECT_EQ(back.json_grammar, kLooseCompact);
  ASSERT_TRUE(back.sampling.grammar);
  EXPECT_EQ(back.sampling.grammar->schema_mode, SchemaMode::BestEffort);
  EXPECT_EQ(back.sampling.grammar->whitespace, JsonWhitespace::Compact);
  EXPECT_EQ(spec_to_json(back), set);
}

// Catches a bad stored value read as the default (a resumed job would compile another grammar).
TEST(JsonGrammarOptionsSpec, ABadStoredValueIsAnErrorNamingIt) {
  OrderedJson json = spec_to_json(spec_with_schema_grammar());
  json["schema_mode"] = "lax";
  try {
    spec_from_json(json);
    FAIL() << "a bad schema_mode was read";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("'lax'"));
    EXPECT_THAT(e.what(), HasSubstr("strict or best-effort"));
  }
  json.erase("schema_mode");
  json["grammar"]["json_whitespace"] = "tight";
  try {
    spec_from_json(json);
    FAIL() << "a bad grammar json_whitespace was read";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("grammar: "));
    EXPECT_THAT(e.what(), HasSubstr("flexible or compact"));
  }
}

// Catches row schemas compiled in the default mode whatever the job says.
TEST(JsonGrammarOptionsRows, EachRowsSchemaCarriesTheJobsOptions) {
  const OrderedJson fields = OrderedJson::parse(R"({"schema": {"type": "string"}})");
  const GrammarSource plain = RowSchemas("schema", "in.jsonl").source_for(fields, 2);
  EXPECT_EQ(plain.schema_mode, SchemaMode::Strict);
  EXPECT_EQ(plain.whitespace, JsonWhitespace::Flexible);
  const GrammarSource loose = RowSchemas("schema", "in.jsonl", kLooseCompact).source_for(fields, 2);
  EXPECT_EQ(loose.schema_mode, SchemaMode::BestEffort);
  EXPECT_EQ(loose.whitespace, JsonWhitespace::Compact);
  EXPECT_EQ(loose.text, plain.text);
}

DatasetRow options_batch_row(size_t line, const std::string& body_extra) {
  DatasetRow row;
  row.row_index = static_cast<int64_t>(line) - 1;
  row.line = line;
  row.fields = OrderedJson::parse(
      str_cat(R"({"custom_id": "r)", line,
              R"(", "method": "POST", "url": "/v1/chat/completions", "body": {"model": "m",
              "messages": [{"role": "user", "content": "hi"}],
              "response_format": {"type": "json_schema", "json_schema": {"schema":
                {"type": "string"}}})",
              body_extra, "}}"));
  return row;
}

// Catches batch lines that ignore the job's options, and a line's own choice overridden by them.
TEST(JsonGrammarOptionsRows, ABatchLineTakesTheJobsOptionsUnlessItGivesItsOwn) {
  BatchRequests requests("in.jsonl");
  const BatchRequest job_options = requests.parse(options_batch_row(1, ""), {}, kLooseCompact);
  ASSERT_TRUE(job_options.request.grammar);
  EXPECT_EQ(job_options.request.grammar->schema_mode, SchemaMode::BestEffort);
  EXPECT_EQ(job_options.request.grammar->whitespace, JsonWhitespace::Compact);
  const BatchRequest own = requests.parse(
      options_batch_row(2, R"(, "schema_mode": "strict", "json_whitespace": "flexible")"), {},
      kLooseCompact);
  ASSERT_TRUE(own.request.grammar);
  EXPECT_EQ(own.request.grammar->schema_mode, SchemaMode::Strict);
  EXPECT_EQ(own.request.grammar->whitespace, JsonWhitespace::Flexible);
  try {
    requests.parse(options_batch_row(3, R"(, "schema_mode": "loose")"), {});
    FAIL() << "a bad schema_mode was accepted";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("in.jsonl:3: "));
    EXPECT_THAT(e.what(), HasSubstr("'schema_mode': unknown schema mode 'loose'"));
  }
}

// Catches a schema noted again for every row that shares it, and notes past the bound kept.
TEST(JsonGrammarOptionsNotes, EachDistinctGrammarIsNotedOnceWithinTheBound) {
  GrammarNotes notes;
  const GrammarSource first{GrammarSourceKind::JsonSchema, "in.jsonl:1", "{}", {}};
  GrammarSource same = first;
  same.name = "in.jsonl:2";
  EXPECT_THAT(notes.add(first, {"/x-a: unknown keyword"}),
              ElementsAre("in.jsonl:1: /x-a: unknown keyword"));
  EXPECT_TRUE(notes.add(same, {"/x-a: unknown keyword"}).empty());
  // The same text in another mode is another grammar.
  EXPECT_EQ(notes.add(with_json_options(same, kLooseCompact), {"/x-a: unknown keyword"}).size(),
            1u);
  for (size_t i = 0; notes.lines().size() < kMaxJobGrammarNotes; ++i)
    notes.add({GrammarSourceKind::JsonSchema, "s", str_cat("{\"title\": \"", i, "\"}"), {}},
              {"a note"});
  EXPECT_EQ(notes.num_left_out(), 0u);
  EXPECT_TRUE(notes.add({GrammarSourceKind::JsonSchema, "s", "true", {}}, {"one", "two"}).empty());
  EXPECT_EQ(notes.num_left_out(), 2u);
  EXPECT_EQ(notes.lines().size(), kMaxJobGrammarNotes);
  EXPECT_THAT(grammar_note_lines("s", {"a", "b", "c"}, 2),
              ElementsAre("s: a", "s: b", "... and 1 more"));
}

}  // namespace
}  // namespace sluice
