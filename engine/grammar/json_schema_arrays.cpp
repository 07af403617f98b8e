// Arrays of a JSON Schema as GBNF: prefixItems, items, counts, contains, uniqueItems.
#include <algorithm>

#include "engine/grammar/json_schema_converter.h"

namespace sluice {
namespace {

// uniqueItems is written for enums of at most this many values (rules: values x count).
constexpr size_t kMaxUniqueValues = 64;

}  // namespace

std::string SchemaConverter::unique_values_array(const SchemaJson& values, uint32_t lo,
                                                 std::optional<uint32_t> hi) {
  std::vector<std::string> literals;
  for (size_t i = 0; i < values.size(); ++i) {
    bool is_repeat = std::find(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(i),
                               values[i]) != values.begin() + static_cast<std::ptrdiff_t>(i);
    if (!is_repeat) literals.push_back(literal_value(values[i]));
  }
  size_t k = literals.size();
  size_t most = std::min<size_t>(hi.value_or(k), k);
  // rest[i][c]: values i.. each taken (after a comma) or skipped, c taken so far; "" when no
  // way remains. Values appear in the enum's order, so no value repeats.
  std::vector<std::vector<std::string>> rest(k + 1, std::vector<std::string>(most + 2));
  for (size_t c = 0; c <= most; ++c) rest[k][c] = c >= lo ? add_rule("\"\"") : "";
  for (size_t i = k; i-- > 0;) {
    for (size_t c = 0; c <= most; ++c) {
      std::string body;
      if (c < most && !rest[i + 1][c + 1].empty())
        body = str_cat("\",\" ws ", literals[i], " ws ", rest[i + 1][c + 1]);
      if (!rest[i + 1][c].empty()) body += (body.empty() ? "" : " | ") + rest[i + 1][c];
      rest[i][c] = body.empty() ? "" : add_rule(body);
    }
  }
  std::string first = lo == 0 ? add_rule("\"\"") : "";
  for (size_t i = k; i-- > 0;) {
    std::string body;
    if (most >= 1 && !rest[i + 1][1].empty()) body = str_cat(literals[i], " ws ", rest[i + 1][1]);
    if (!first.empty()) body += (body.empty() ? "" : " | ") + first;
    first = body.empty() ? "" : add_rule(body);
  }
  if (first.empty()) return "";
  return add_rule(str_cat("\"[\" ws ", first, " \"]\""));
}

std::string SchemaConverter::visit_array(const SchemaJson& schema, const std::string& pointer,
                                         int depth) {
  const SchemaJson* prefix_schemas = nullptr;
  if (schema.contains("prefixItems")) {
    prefix_schemas = &schema["prefixItems"];
    if (!prefix_schemas->is_array())
      error(pointer + "/prefixItems", "'prefixItems' must be an array");
  }
  const SchemaJson* items = schema.contains("items") ? &schema["items"] : nullptr;
  uint32_t lo = count_keyword(schema, "minItems", pointer).value_or(0);
  std::optional<uint32_t> hi = count_keyword(schema, "maxItems", pointer);
  // contains: the first minContains items (1 by default) satisfy it (a narrowing).
  std::vector<const SchemaJson*> prefix;
  std::vector<std::string> prefix_pointers;
  if (prefix_schemas) {
    for (size_t i = 0; i < prefix_schemas->size(); ++i) {
      prefix.push_back(&(*prefix_schemas)[i]);
      prefix_pointers.push_back(str_cat(pointer, "/prefixItems/", i));
    }
  }
  uint32_t min_contains = count_keyword(schema, "minContains", pointer).value_or(1);
  // maxContains bounds the matching items even when minContains is 0 (then contains alone
  // constrains nothing): refused either way.
  if (schema.contains("contains") && schema.contains("maxContains"))
    refuse(pointer + "/maxContains", "unsupported keyword 'maxContains'");
  if (schema.contains("contains") && min_contains > 0) {
    if (prefix_schemas)
      refuse(pointer + "/contains", "'contains' beside 'prefixItems' is not supported");
    const SchemaJson& wanted =
        keep(merge_schemas(items ? *items : SchemaJson(true), schema["contains"], merge_context(),
                           pointer + "/contains"));
    for (uint32_t i = 0; i < min_contains; ++i) {
      prefix.push_back(&wanted);
      prefix_pointers.push_back(pointer + "/contains");
    }
    lo = std::max(lo, min_contains);
  }
  bool items_allowed = !(items && items->is_boolean() && !items->get<bool>());
  size_t k = prefix.size();
  if (!items_allowed) hi = hi ? std::min<uint32_t>(*hi, k) : static_cast<uint32_t>(k);
  if (hi && *hi < lo) error(pointer, "no array length satisfies minItems, maxItems and items");
  if (schema.contains("uniqueItems")) {
    const SchemaJson& unique = schema["uniqueItems"];
    if (!unique.is_boolean()) error(pointer + "/uniqueItems", "'uniqueItems' must be a boolean");
    if (unique.get<bool>() && !(hi && *hi <= 1)) {
      // Arrays of enum or const values: each value at most once.
      SchemaJson item_schema =
          items ? flatten_schema(*items, merge_context(), pointer + "/items") : SchemaJson(true);
      bool is_values = item_schema.is_object() &&
                       (item_schema.contains("enum") || item_schema.contains("const"));
      if (k > 0 || !is_values) {
        refuse(pointer + "/uniqueItems",
               "unsupported keyword 'uniqueItems' (enforced only for items that are an enum or "
               "const)");
      }
      SchemaJson values = admitted_values(item_schema, pointer + "/items", depth + 1);
      if (values.size() > kMaxUniqueValues) {
        refuse(pointer + "/uniqueItems", "unsupported keyword 'uniqueItems' (an enum of more than ",
               kMaxUniqueValues, " values)");
      }
      std::string unique_array = unique_values_array(values, lo, hi);
      if (unique_array.empty())
        error(pointer + "/minItems",
              "fewer distinct values than 'minItems' (the schema is unsatisfiable)");
      return unique_array;
    }
  }
  std::vector<std::string> prefix_exprs;
  for (size_t i = 0; i < k; ++i) {
    if (hi && i >= *hi) break;
    prefix_exprs.push_back(visit(*prefix[i], prefix_pointers[i], depth + 1));
  }
  std::string item = "value";
  if (items && items_allowed) item = visit(*items, pointer + "/items", depth + 1);
  // The tail: items after the prefix, tail_lo to tail_hi of them.
  uint32_t tail_lo = lo > k ? lo - static_cast<uint32_t>(k) : 0;
  std::optional<uint32_t> tail_hi;
  if (hi) tail_hi = *hi > k ? *hi - static_cast<uint32_t>(k) : 0;
  std::string tail;
  if (!tail_hi || *tail_hi > 0) {
    if (k == 0) {
      std::string more =
          str_cat("( \",\" ws ", item, " ws )",
                  repeat_suffix(tail_lo > 0 ? tail_lo - 1 : 0,
                                tail_hi ? std::optional<uint32_t>(*tail_hi - 1) : std::nullopt));
      tail = str_cat(item, " ws ", more);
      if (tail_lo == 0) tail = str_cat("( ", tail, " )?");
    } else {
      tail = str_cat("( \",\" ws ", item, " ws )", repeat_suffix(tail_lo, tail_hi));
    }
  }
  // Prefix items from last to first: each required below minItems, optional (and ending the
  // array) above it.
  std::string body = tail;
  for (size_t i = prefix_exprs.size(); i-- > 0;) {
    std::string elem = str_cat(i > 0 ? "\",\" ws " : "", prefix_exprs[i], " ws ", body);
    body = i < lo ? elem : str_cat("( ", elem, " )?");
  }
  return add_rule(str_cat("\"[\" ws ", body, " \"]\""));
}

}  // namespace sluice
