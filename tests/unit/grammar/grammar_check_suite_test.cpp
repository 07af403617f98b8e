// The grammar compiler's soundness over public test suites, checked as `sluice grammar check`
// checks a text: in a real tokenizer's tokens through the sampler's mask and matcher. For every
// schema that compiles (strict), every invalid instance must be refused; a valid instance must
// be accepted unless the case is a documented narrowing (json_schema_grammar.h) listed below.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>
#include <span>

#include "engine/core/error.h"
#include "engine/grammar/grammar_check.h"
#include "engine/tokenizer/tokenizer_loader.h"
#include "tests/support/test_paths.h"

namespace sluice {
namespace {

using nlohmann::json;

// The valid instances of a group of the JSON-Schema-Test-Suite sample that the grammar never
// writes, and why: the narrowings of json_schema_grammar.h. Keyed by the file under the draft's
// folder (both drafts' files share these groups) and the group's description.
struct ListedGroup {
  std::string_view file;   // "properties.json", "optional/format/date.json"
  std::string_view group;  // the group's description
  std::string_view reason;
};

constexpr std::string_view kPropertyOrder = "properties are written in the schema's order";
constexpr std::string_view kNoExtraKeys =
    "without additionalProperties no keys beyond the named and pattern ones are written";
constexpr std::string_view kWholePattern = "a pattern is matched as a whole, not searched for";
constexpr std::string_view kPatternKeys =
    "extra keys are written from the patterns, satisfying every pattern's schema";
constexpr std::string_view kBoundedNumber =
    "a bounded number is an integer or M.ddd with both M and M + 1 in range";
constexpr std::string_view kConstSpelling = "a const value is written as the schema spells it";
constexpr std::string_view kContainsFirst = "contains: the first minContains items satisfy it";
constexpr std::string_view kDependentRequired =
    "dependentRequired makes the dependencies of an optional property required";
constexpr std::string_view kDependentSchemaBranch =
    "dependentSchemas: the branch without a property names it, and without additionalProperties "
    "no other keys are written";
constexpr std::string_view kOneOfApart =
    "oneOf branches told apart by required properties: each is written without those the "
    "others require";
constexpr std::string_view kFormatShape =
    "formats are written in one narrow shape (json_schema_grammar.h lists each)";

constexpr ListedGroup kGrammarNarrowings[] = {
    {"additionalProperties.json", "additionalProperties are allowed by default", kNoExtraKeys},
    {"additionalProperties.json",
     "additionalProperties being false does not allow other properties", kWholePattern},
    {"additionalProperties.json", "non-ASCII pattern with additionalProperties", kWholePattern},
    {"allOf.json", "allOf with base schema", kPropertyOrder},
    {"anyOf.json", "anyOf complex types", kPropertyOrder},
    {"const.json", "const with -2.0 matches integer and float types", kConstSpelling},
    {"const.json", "float and integers are equal up to 64-bit representation limits",
     kConstSpelling},
    {"contains.json", "contains keyword validation", kContainsFirst},
    {"contains.json", "contains keyword with const keyword", kContainsFirst},
    {"minContains.json", "minContains=2 with contains", kContainsFirst},
    {"dependentRequired.json", "single dependency", kDependentRequired},
    {"dependentRequired.json", "multiple dependents required", kDependentRequired},
    {"dependentRequired.json", "dependencies with escaped characters", kDependentRequired},
    {"dependencies.json", "dependencies", kDependentRequired},
    {"dependencies.json", "multiple dependencies", kDependentRequired},
    {"dependentSchemas.json", "single dependency", kDependentSchemaBranch},
    {"dependentSchemas.json", "boolean subschemas", kDependentSchemaBranch},
    {"dependentSchemas.json", "dependent subschema incompatible with root", kDependentSchemaBranch},
    {"dependencies.json", "multiple dependencies subschema", kDependentSchemaBranch},
    {"dependencies.json", "dependencies with boolean subschemas", kDependentSchemaBranch},
    {"dependencies.json", "dependencies with escaped characters", kDependentSchemaBranch},
    {"dependencies.json", "dependent subschema incompatible with root", kDependentSchemaBranch},
    {"exclusiveMinimum.json", "exclusiveMinimum validation", kBoundedNumber},
    {"minimum.json", "minimum validation", kBoundedNumber},
    {"oneOf.json", "oneOf with required", kOneOfApart},
    {"pattern.json", "pattern is not anchored", kWholePattern},
    {"patternProperties.json", "multiple simultaneous patternProperties are validated",
     kPatternKeys},
    {"patternProperties.json", "regexes are not anchored by default and are case sensitive",
     kNoExtraKeys},
    {"patternProperties.json", "patternProperties with boolean schemas", kPatternKeys},
    {"properties.json", "object properties validation", kNoExtraKeys},
    {"properties.json", "properties, patternProperties, additionalProperties interaction",
     kWholePattern},
    {"required.json", "required properties whose names are Javascript object property names",
     kPropertyOrder},
    {"required.json", "required with escaped characters", kPropertyOrder},
    {"optional/format/date-time.json", "validation of date-time strings", kFormatShape},
    {"optional/format/date.json", "validation of date strings", kFormatShape},
    {"optional/format/duration.json", "validation of duration strings", kFormatShape},
    {"optional/format/email.json", "validation of e-mail addresses", kFormatShape},
    {"optional/format/hostname.json", "validation of host names", kFormatShape},
    {"optional/format/hostname.json", "validation of A-label (punycode) host names", kFormatShape},
    {"optional/format/ipv6.json", "validation of IPv6 addresses", kFormatShape},
    {"optional/format/time.json", "validation of time strings", kFormatShape},
    {"optional/format/uri.json", "validation of URIs", kFormatShape},
    {"optional/format/uuid.json", "uuid format", kFormatShape},
};

// file without its draft folder ("draft7/optional/x.json" -> "optional/x.json").
std::string_view without_draft(std::string_view file) {
  return file.substr(file.find('/') + 1);
}

// Whether the group of file (a path under the suite's tests/ folder) is in list.
bool is_listed_group(std::span<const ListedGroup> list, const std::string& file,
                     const std::string& group) {
  return std::any_of(list.begin(), list.end(), [&](const ListedGroup& listed) {
    return listed.file == without_draft(file) && listed.group == group;
  });
}

// value with every integral float written as an integer (1.0 -> 1): the spelling the grammar
// writes for the same JSON value.
json with_integral_floats_as_integers(const json& value) {
  if (value.is_number_float()) {
    const double d = value.get<double>();
    if (std::isfinite(d) && std::floor(d) == d && std::fabs(d) < 1e15)
      return static_cast<int64_t>(d);
    return value;
  }
  if (!value.is_array() && !value.is_object()) return value;
  json out = value;
  for (auto& item : out) item = with_integral_floats_as_integers(item);
  return out;
}

struct SoundnessCounts {
  int num_schemas = 0;
  int num_schemas_not_compiled = 0;
  int num_invalid_refused = 0;
  int num_valid_accepted = 0;
  int num_valid_narrowed = 0;
  std::vector<std::string> unsound;  // invalid instances accepted: grammar compiler bugs
  // Valid instances refused: the test's description, then the verdict's line.
  struct Narrowed {
    std::string test;
    std::string line;
  };
  std::vector<Narrowed> narrowed;
  std::vector<std::string> mask_mismatches;
};

// Checks one instance in its compact spelling and with integral floats as integers. An invalid
// instance must be refused in both; a valid one counts as accepted when either is.
void check_instance(const GrammarTextCheck& check, const json& data, bool is_valid,
                    const std::string& where, const std::string& test, SoundnessCounts& counts) {
  bool is_any_accepted = false;
  std::string refusal;
  for (const std::string& text : {data.dump(), with_integral_floats_as_integers(data).dump()}) {
    const TextVerdict verdict = check.check(text);
    if (verdict.is_mask_mismatch)
      counts.mask_mismatches.push_back(str_cat(where, " | ", test, ": ", verdict.reason));
    if (verdict.is_accepted && !is_valid) {
      const std::string by_validator = !verdict.by_source            ? ""
                                       : verdict.by_source->is_valid ? " (the validator says valid)"
                                                                     : "";
      counts.unsound.push_back(
          str_cat(where, " | ", test, ": invalid instance ", text, " accepted", by_validator));
    }
    is_any_accepted = is_any_accepted || verdict.is_accepted;
    if (!verdict.is_accepted) refusal = describe_text_verdict(verdict);
  }
  if (!is_valid) {
    if (!is_any_accepted) ++counts.num_invalid_refused;
  } else if (is_any_accepted) {
    ++counts.num_valid_accepted;
  } else {
    ++counts.num_valid_narrowed;
    counts.narrowed.push_back(
        {test, str_cat(where, " | ", test, ": ", data.dump(), ": ", refusal)});
  }
}

// Compiles schema (strict) and checks each test {"description", "valid", "data"} of tests.
void check_schema_tests(const json& schema, const json& tests, const std::string& where,
                        const Tokenizer& tokenizer,
                        const std::shared_ptr<const TokenVocabulary>& vocabulary,
                        SoundnessCounts& counts) {
  ++counts.num_schemas;
  GrammarSource source;
  source.kind = GrammarSourceKind::JsonSchema;
  source.name = where;
  source.text = schema.dump();
  const GrammarCompileReport report = compile_for_check(source);
  if (!report.is_compiled()) {
    ++counts.num_schemas_not_compiled;
    return;
  }
  const GrammarTextCheck check(source, report, &tokenizer, vocabulary);
  for (const json& test_case : tests) {
    check_instance(check, test_case.at("data"), test_case.at("valid").get<bool>(), where,
                   test_case.at("description").get<std::string>(), counts);
  }
}

std::vector<std::string> json_files_under(const std::string& root, std::string_view prefix) {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    const std::string relative = std::filesystem::relative(entry.path(), root).generic_string();
    if (entry.is_regular_file() && entry.path().extension() == ".json" &&
        relative.starts_with(prefix)) {
      files.push_back(relative);
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

struct CheckTokenizer {
  std::unique_ptr<Tokenizer> tokenizer;
  std::shared_ptr<const TokenVocabulary> vocabulary;
};

CheckTokenizer load_check_tokenizer(const std::string& relative) {
  CheckTokenizer out;
  out.tokenizer = load_tokenizer_file(test::shared_path(relative));
  out.vocabulary = TokenVocabulary::from_tokenizer(*out.tokenizer);
  return out;
}

void print_counts(const char* name, const SoundnessCounts& counts) {
  std::cout << name << ": " << counts.num_schemas << " schemas, " << counts.num_schemas_not_compiled
            << " not compiled (strict); invalid refused " << counts.num_invalid_refused
            << ", valid accepted " << counts.num_valid_accepted << ", valid narrowed "
            << counts.num_valid_narrowed << "\n";
}

// The suite's groups against the two lists: failures, and the listed groups that were met.
struct SuiteListing {
  std::vector<std::string> failures;
  std::set<std::string> narrowings_met;  // "file | group", the file without its draft folder
};

// Checks one group of a suite file (relative path under the suite's tests/ folder).
void check_suite_group(json group, const std::string& file, const std::string& draft_uri,
                       const CheckTokenizer& checker, SoundnessCounts& counts,
                       SuiteListing& listing) {
  json& schema = group.at("schema");
  // The suite's schemas leave $schema out: the folder says the draft.
  if (schema.is_object() && !schema.contains("$schema")) schema["$schema"] = draft_uri;
  const std::string group_name = group.at("description").get<std::string>();
  const std::string key = str_cat(without_draft(file), " | ", group_name);
  const size_t num_narrowed = counts.narrowed.size();
  const size_t num_unsound = counts.unsound.size();
  check_schema_tests(schema, group.at("tests"), str_cat(file, " | ", group_name),
                     *checker.tokenizer, checker.vocabulary, counts);
  for (size_t i = num_narrowed; i < counts.narrowed.size(); ++i) {
    if (is_listed_group(kGrammarNarrowings, file, group_name)) {
      listing.narrowings_met.insert(key);
    } else {
      listing.failures.push_back("not a listed narrowing: " + counts.narrowed[i].line);
    }
  }
  // An invalid instance the grammar accepts is a soundness gap of the grammar compiler.
  for (size_t i = num_unsound; i < counts.unsound.size(); ++i)
    listing.failures.push_back("unsound: " + counts.unsound[i]);
}

TEST(GrammarCheckSuite, JsonSchemaTestSuiteSample) {
  const CheckTokenizer stories = load_check_tokenizer("models/stories260K/llama2c/tok512.model");
  const std::string root = test::source_dir() + "/tests/data/json-schema-test-suite";
  SoundnessCounts counts;
  SuiteListing listing;
  for (const char* draft : {"draft2020-12/", "draft7/"}) {
    const std::string draft_uri = std::string(draft) == "draft7/"
                                      ? "http://json-schema.org/draft-07/schema#"
                                      : "https://json-schema.org/draft/2020-12/schema";
    for (const std::string& file : json_files_under(root, draft)) {
      for (const json& group : json::parse(test::read_file(root + "/" + file)))
        check_suite_group(group, file, draft_uri, stories, counts, listing);
    }
  }
  print_counts("JSON-Schema-Test-Suite sample", counts);
  for (const std::string& line : listing.failures) ADD_FAILURE() << line;
  for (const std::string& line : counts.mask_mismatches) ADD_FAILURE() << "mask: " << line;
  // An entry the grammar no longer needs comes off its list.
  for (const ListedGroup& n : kGrammarNarrowings) {
    if (!listing.narrowings_met.contains(str_cat(n.file, " | ", n.group)))
      ADD_FAILURE() << "listed narrowing not met: " << n.file << " | " << n.group;
  }
  EXPECT_GT(counts.num_invalid_refused, 900);
  EXPECT_GT(counts.num_valid_accepted, 800);
}

// JSONSchemaBench's instances in a SentencePiece vocabulary (stories260K's, 512 pieces) and a
// byte-level BPE one (GPT-2's, 50257 tokens, whose pieces span JSON punctuation: '":', '",').
TEST(GrammarCheckSuite, JsonSchemaBenchSample) {
  const std::string root = test::source_dir() + "/tests/data/jsonschemabench-sample";
  for (const char* tokenizer_path : {"models/stories260K/llama2c/tok512.model",
                                     "tokenizers/llamacpp-vocab/ggml-vocab-gpt-2.gguf"}) {
    const CheckTokenizer checker = load_check_tokenizer(tokenizer_path);
    SoundnessCounts counts;
    for (const std::string& file : json_files_under(root, "")) {
      const json entry = json::parse(test::read_file(root + "/" + file));
      check_schema_tests(entry.at("schema"), entry.at("tests"), file, *checker.tokenizer,
                         checker.vocabulary, counts);
    }
    print_counts(str_cat("JSONSchemaBench sample in ", tokenizer_path).c_str(), counts);
    for (const SoundnessCounts::Narrowed& n : counts.narrowed)
      std::cout << "  narrowed: " << n.line << "\n";
    for (const std::string& line : counts.unsound) ADD_FAILURE() << "unsound: " << line;
    for (const std::string& line : counts.mask_mismatches) ADD_FAILURE() << "mask: " << line;
    EXPECT_GT(counts.num_schemas - counts.num_schemas_not_compiled, 30);
    EXPECT_GT(counts.num_invalid_refused, 60);
  }
}

}  // namespace
}  // namespace sluice
