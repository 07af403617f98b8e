// Column templates: how a row's fields become the user's prompt, e.g. "{instruction}[\n\n{input}]".
// {name} inserts a field; [ ... ] is an optional section, dropped when a field inside it is
// missing or empty, so one template serves Alpaca rows with and without an input. Doubled
// characters ({{ }} [[ ]]) are literal, read greedily left to right. Sections do not nest.
// Escapes such as \n are not processed here; the CLI turns them into real characters.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/input/dataset_format.h"
#include "engine/input/field_discovery.h"

namespace sluice {

class ColumnTemplate {
 public:
  // Parses text. Throws Error naming the (1-based, in characters) column of a syntax error: an
  // unclosed or stray brace or bracket, an empty field name, a nested section.
  static ColumnTemplate parse(const std::string& text);

  // Fills the template from a row's fields (a JSON object). String values are inserted as they
  // are, other values as JSON (numbers without quotes). Throws Error naming the field when a
  // field outside optional sections is missing (the caller adds the row's line); an empty one
  // renders as nothing, so an empty prompt field gives an empty prompt (BOS alone).
  std::string render(const nlohmann::ordered_json& fields) const;

  // Returns the names of the fields the template uses, in first-use order, without repeats.
  std::vector<std::string> field_names() const;

 private:
  struct Piece {
    std::string text;  // literal text, or the field's name
    bool is_field = false;
  };
  // A run of pieces, required or optional; the template is a sequence of these.
  struct Section {
    std::vector<Piece> pieces;
    bool is_optional = false;
  };

  std::vector<Section> sections_;
};

// Returns the template a dataset's rows are read with by default: "{instruction}[\n\n{input}]"
// for Alpaca-like fields, "{instruction}" without an input, "{prompt}", "{question}", "{query}"
// or "{text}" (names matched case-insensitively), otherwise the first field holding strings.
// Returns "" for chat formats (they use their messages) and when no field fits.
std::string default_column_template(DatasetFormat format, const std::vector<FieldInfo>& fields);

}  // namespace sluice
