// The JSON Schema to GBNF converter behind json_schema_grammar(): one visit per subschema, which
// returns a GBNF expression (usually a rule name) for the values the subschema accepts. Its
// methods live in one file per kind of value: json_schema_grammar.cpp (dispatch, combinators,
// references, enum/const), json_schema_objects.cpp, json_schema_arrays.cpp,
// json_schema_strings.cpp and json_schema_numbers.cpp. Internal to engine/grammar.
#pragma once

#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "engine/core/error.h"
#include "engine/grammar/grammar.h"
#include "engine/grammar/grammar_expr.h"
#include "engine/grammar/json_schema_grammar.h"
#include "engine/grammar/json_schema_keywords.h"
#include "engine/grammar/json_schema_merge.h"

namespace sluice {

// Schemas nest at most this deep (the converter recurses per subschema).
inline constexpr int kMaxSchemaNesting = 64;
// A schema has at most this many dependent schemas (each doubles the branches of its object).
inline constexpr size_t kMaxDependentSchemas = 4;
// --schema-mode best-effort drops at most this many keywords from one schema.
inline constexpr size_t kMaxBestEffortDrops = 256;

// minLength / maxLength of a string schema.
struct StringLengths {
  std::optional<uint32_t> min;
  std::optional<uint32_t> max;
};

class SchemaConverter {
 public:
  SchemaConverter(const SchemaJson& root, const std::string& source_name,
                  const JsonGrammarOptions& options, JsonSchemaNotes& notes);

  // Returns the GBNF expression for the schema at pointer (a rule name, usually).
  std::string visit(const SchemaJson& schema, const std::string& pointer, int depth);
  // Returns the grammar whose root is root_expr, over the rules visited so far.
  Grammar build(const std::string& root_expr) const;

  // The GBNF text (primitives and rules) with root_expr as its root.
  std::string text(const std::string& root_expr) const;

 private:
  template <typename... Args>
  [[noreturn]] void error(const std::string& pointer, Args&&... args) const {
    fail(source_name_, ": ", pointer.empty() ? "/" : pointer, ": ", std::forward<Args>(args)...);
  }
  // Refuses the keyword at keyword_pointer (it cannot be enforced exactly): SchemaRefusal.
  template <typename... Args>
  [[noreturn]] void refuse(const std::string& keyword_pointer, Args&&... args) const {
    throw SchemaRefusal(
        str_cat(source_name_, ": ", keyword_pointer, ": ", std::forward<Args>(args)...),
        keyword_pointer);
  }

  // json_schema_grammar.cpp
  std::string add_rule(const std::string& body);
  const SchemaJson& keep(SchemaJson schema);
  void check_keywords(const SchemaJson& schema, const std::string& pointer);
  std::string visit_ref(const SchemaJson& schema, const std::string& pointer, int depth);
  std::string visit_dependent_schemas(const SchemaJson& schema, const char* keyword,
                                      const std::string& pointer, int depth);
  // Makes the branches of a oneOf disjoint: each pair provably so (json_schema_grammar.cpp), or
  // one narrowed to leave out a property the other requires; refuses a pair it cannot (best
  // effort: notes that the oneOf is written as anyOf).
  void make_one_of_disjoint(std::vector<SchemaJson>& branches, const std::string& pointer);
  bool are_disjoint(const SchemaJson& a, const SchemaJson& b, const std::string& pointer) const;
  // narrowed as an object without one of the properties other requires, when that makes them
  // disjoint.
  std::optional<SchemaJson> without_required_of(const SchemaJson& narrowed, const SchemaJson& other,
                                                const std::string& pointer) const;
  std::string visit_union(const SchemaJson& schema, const std::string& keyword,
                          const std::string& pointer, int depth);
  std::string visit_values(const SchemaJson& schema, const std::string& pointer, int depth);
  std::string visit_kinds(const SchemaJson& schema, const std::string& pointer, int depth);
  std::string visit_kind(const SchemaJson& schema, const std::string& kind,
                         const std::string& pointer, int depth);
  std::vector<std::string> allowed_types(const SchemaJson& schema, const std::string& pointer);
  bool has_validation_siblings(const SchemaJson& schema, const std::set<std::string>& except) const;
  // The enum/const values of schema that its other keywords accept; refuses an empty list.
  SchemaJson admitted_values(const SchemaJson& schema, const std::string& pointer, int depth);
  std::string literal_value(const SchemaJson& value) const;
  SchemaMergeContext merge_context() const;
  const SchemaJson& resolve_ref(const std::string& target, const std::string& pointer) const;

  // json_schema_objects.cpp
  std::string visit_object(const SchemaJson& schema, const std::string& pointer, int depth);
  std::string excluded_key_rule(const std::vector<std::string>& names);
  // The rule of a JSON string whose contents match pattern, with a length within lengths.
  std::string pattern_rule(const std::string& pattern, const std::string& pointer,
                           const StringLengths& lengths = {});
  // The rule of a JSON string whose contents are expr's sentences (expr in JSON-string text).
  std::string string_expr_rule(GrammarExpr expr, const std::string& pointer);
  bool pattern_finds(const std::string& pattern, const std::string& text,
                     const std::string& pointer);

  // json_schema_arrays.cpp
  std::string visit_array(const SchemaJson& schema, const std::string& pointer, int depth);
  std::string unique_values_array(const SchemaJson& values, uint32_t lo,
                                  std::optional<uint32_t> hi);

  // json_schema_strings.cpp
  std::string visit_string(const SchemaJson& schema, const std::string& pointer);

  // json_schema_numbers.cpp
  std::string visit_number(const SchemaJson& schema, const std::string& pointer, bool is_integer);
  std::optional<double> bound(const SchemaJson& schema, const char* keyword,
                              const std::string& pointer);

  std::optional<uint32_t> count_keyword(const SchemaJson& schema, const char* keyword,
                                        const std::string& pointer);
  static std::string repeat_suffix(uint32_t lo, std::optional<uint32_t> hi);

  const SchemaJson& root_;
  const std::string& source_name_;
  JsonGrammarOptions options_;
  JsonSchemaNotes& notes_;
  SchemaDialect dialect_;
  std::vector<std::pair<std::string, std::string>> rules_;
  std::map<std::string, std::string> rule_by_body_;
  std::map<std::string, std::string> ref_rules_;
  std::vector<std::pair<std::string, GrammarExpr>> pattern_exprs_;
  size_t num_pattern_exprs_ = 0;
  // Schemas the converter made (merged allOf, rewritten dialects): stable addresses.
  std::deque<SchemaJson> owned_;
};

// The GBNF rules the formats use (json_schema_strings.cpp).
extern const char* const kJsonFormatPrimitives;

// A GBNF expression of the JSON text of every integer in [lo, hi] (nullopt: unbounded), or ""
// when there is none (json_schema_numbers.cpp).
std::string integer_range_gbnf(std::optional<int64_t> lo, std::optional<int64_t> hi);

}  // namespace sluice
