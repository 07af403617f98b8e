#include "engine/input/column_template.h"

#include <algorithm>
#include <cctype>
#include <utility>

#include "engine/core/error.h"
#include "engine/input/field_value.h"

namespace sluice {

namespace {

// Returns the 1-based column, in code points, of text[offset].
size_t column_of(const std::string& text, size_t offset) {
  size_t column = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) ++column;
  }
  return column;
}

[[noreturn]] void fail_syntax(const std::string& text, size_t offset, const std::string& what) {
  fail("column template: ", what, " at column ", column_of(text, offset));
}

bool is_template_char(char c) {
  return c == '{' || c == '}' || c == '[' || c == ']';
}

// Returns the offset of the '}' closing the field that opens at text[open], or fails.
size_t find_field_end(const std::string& text, size_t open) {
  for (size_t i = open + 1; i < text.size(); ++i) {
    if (text[i] == '}') {
      if (i == open + 1) fail_syntax(text, open, "empty field name '{}'");
      return i;
    }
    if (text[i] == '{') fail_syntax(text, i, "'{' inside a field name");
  }
  fail_syntax(text, open, "unclosed '{'");
}

std::string lowercase(const std::string& text) {
  std::string out = text;
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace

ColumnTemplate ColumnTemplate::parse(const std::string& text) {
  ColumnTemplate result;
  Section current;
  size_t section_open = 0;  // offset of the '[' that opened current, when it is optional
  std::string literal;
  const auto flush_literal = [&] {
    if (!literal.empty()) current.pieces.push_back({std::exchange(literal, {}), false});
  };
  const auto close_section = [&](bool next_is_optional) {
    flush_literal();
    if (!current.pieces.empty()) result.sections_.push_back(std::move(current));
    current = Section{{}, next_is_optional};
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (is_template_char(c) && i + 1 < text.size() && text[i + 1] == c) {
      literal += c;  // a doubled character is the character itself
      ++i;
    } else if (c == '{') {
      const size_t end = find_field_end(text, i);
      flush_literal();
      current.pieces.push_back({text.substr(i + 1, end - i - 1), true});
      i = end;
    } else if (c == '}') {
      fail_syntax(text, i, "unexpected '}' (write '}}' for a literal brace)");
    } else if (c == '[') {
      if (current.is_optional) {
        fail_syntax(text, i, "'[' inside an optional section (write '[[' for a literal bracket)");
      }
      close_section(true);
      section_open = i;
    } else if (c == ']') {
      if (!current.is_optional) {
        fail_syntax(text, i, "unexpected ']' (write ']]' for a literal bracket)");
      }
      close_section(false);
    } else {
      literal += c;
    }
  }
  if (current.is_optional) fail_syntax(text, section_open, "unclosed '['");
  close_section(false);
  return result;
}

std::string ColumnTemplate::render(const nlohmann::ordered_json& fields) const {
  if (!fields.is_object()) fail("column template: the row's fields are not a JSON object");
  const auto value_of = [&](const std::string& name) -> const nlohmann::ordered_json* {
    const auto it = fields.find(name);
    return it == fields.end() || is_empty_field_value(*it) ? nullptr : &*it;
  };
  std::string out;
  for (const Section& section : sections_) {
    const bool is_complete = std::all_of(
        section.pieces.begin(), section.pieces.end(),
        [&](const Piece& piece) { return !piece.is_field || value_of(piece.text) != nullptr; });
    if (section.is_optional && !is_complete) continue;
    for (const Piece& piece : section.pieces) {
      if (!piece.is_field) {
        out += piece.text;
        continue;
      }
      // A required field may be empty (an empty prompt is BOS alone), but not missing.
      const auto it = fields.find(piece.text);
      if (it == fields.end()) fail("column template: field \"", piece.text, "\" is missing");
      if (!is_empty_field_value(*it)) out += field_value_text(*it);
    }
  }
  return out;
}

std::vector<std::string> ColumnTemplate::field_names() const {
  std::vector<std::string> names;
  for (const Section& section : sections_) {
    for (const Piece& piece : section.pieces) {
      if (piece.is_field && std::find(names.begin(), names.end(), piece.text) == names.end()) {
        names.push_back(piece.text);
      }
    }
  }
  return names;
}

std::string default_column_template(DatasetFormat format, const std::vector<FieldInfo>& fields) {
  // Batch lines carry their own prompts in their bodies.
  if (is_chat_format(format) || format == DatasetFormat::OpenAiBatch) return "";
  // Only names a template can spell (no braces) and that hold something are candidates.
  const auto usable = [](const FieldInfo& field) {
    return field.num_non_empty > 0 && field.name.find_first_of("{}") == std::string::npos;
  };
  const auto find_named = [&](const std::string& wanted, bool may_be_empty) -> const FieldInfo* {
    for (const FieldInfo& field : fields) {
      if (lowercase(field.name) != wanted) continue;
      if (usable(field) || (may_be_empty && field.name.find_first_of("{}") == std::string::npos)) {
        return &field;
      }
    }
    return nullptr;
  };
  if (const FieldInfo* instruction = find_named("instruction", false)) {
    // The input sits in an optional section, so a sample where it is always empty still counts.
    const FieldInfo* input = find_named("input", true);
    if (!input) return "{" + instruction->name + "}";
    return "{" + instruction->name + "}[\n\n{" + input->name + "}]";
  }
  for (const char* name : {"prompt", "question", "query", "text"}) {
    if (const FieldInfo* field = find_named(name, true)) return "{" + field->name + "}";
  }
  for (const FieldInfo& field : fields) {
    if (usable(field) && field.num_strings > 0) return "{" + field.name + "}";
  }
  return "";
}

}  // namespace sluice
