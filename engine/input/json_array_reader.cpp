#include "engine/input/json_array_reader.h"

#include "engine/input/json_row.h"

namespace sluice {

namespace {

// Returns "'x'" for a byte in a message, or "the end of the file".
std::string describe_byte(int byte) {
  if (byte < 0) return "the end of the file";
  if (byte < 0x20 || byte >= 0x7F) return str_cat("byte ", byte);
  return str_cat("'", static_cast<char>(byte), "'");
}

}  // namespace

JsonArrayReader::JsonArrayReader(const std::string& path, DatasetFormat row_format,
                                 uint64_t max_bytes)
    : DatasetReader(path, max_bytes), row_format_(row_format) {
  input().skip_bom();
}

void JsonArrayReader::fail_fatal(TextPosition position, const std::string& message) {
  fatal_error_ = str_cat(path(), ":", position.line, ":", position.column, ": ", message);
  throw Error(*fatal_error_);
}

std::optional<DatasetRow> JsonArrayReader::next() {
  if (fatal_error_) throw Error(*fatal_error_);
  if (is_finished_) return std::nullopt;
  if (!seek_element()) {
    finish();
    return std::nullopt;
  }
  const TextPosition start = input().position();
  JsonRowPlace place;
  place.path = &path();
  place.row_index = next_row_index_++;
  place.row_line = static_cast<size_t>(place.row_index) + 1;
  place.text_start = start;
  place.is_array_element = true;
  capture_element(start);
  return parse_json_row(element_text_, row_format_, place);
}

bool JsonArrayReader::seek_element() {
  TextInput& in = input();
  in.skip_whitespace();
  if (!has_started_) {
    if (in.peek() != '[') {
      fail_fatal(in.position(), str_cat("expected a JSON array ('['), found ",
                                        describe_byte(in.peek()), " (is the file JSONL?)"));
    }
    in.get();
    has_started_ = true;
    in.skip_whitespace();
    if (in.peek() != ']') return true;
    in.get();
    return false;
  }
  const int byte = in.peek();
  if (byte == ']') {
    in.get();
    return false;
  }
  if (byte != ',') {
    fail_fatal(in.position(),
               str_cat("expected ',' or ']' after element ", next_row_index_, ", found ",
                       describe_byte(byte), byte < 0 ? " (the array is truncated)" : ""));
  }
  in.get();
  in.skip_whitespace();
  if (in.peek() == ']' || in.peek() == ',' || in.peek() < 0) {
    fail_fatal(in.position(), str_cat("expected element ", next_row_index_ + 1, ", found ",
                                      describe_byte(in.peek())));
  }
  return true;
}

void JsonArrayReader::capture_element(TextPosition start) {
  TextInput& in = input();
  element_text_.clear();
  open_brackets_.clear();
  bool is_in_string = false;
  bool is_escaped = false;
  while (true) {
    const int byte = in.peek();
    // A scalar element (or one with trailing junk) ends where the array's syntax resumes.
    const bool is_top_level = !is_in_string && open_brackets_.empty();
    if (is_top_level && !element_text_.empty() &&
        (byte == ',' || byte == ']' || is_blank_byte(byte))) {
      return;
    }
    if (byte < 0) {
      fail_fatal(in.position(), str_cat("the file ends inside element ", next_row_index_,
                                        " (which starts at line ", start.line, ", column ",
                                        start.column, "): the array is truncated"));
    }
    const TextPosition position = in.position();
    element_text_.push_back(static_cast<char>(in.get()));
    if (is_in_string) {
      if (is_escaped) {
        is_escaped = false;
      } else if (byte == '\\') {
        is_escaped = true;
      } else if (byte == '"') {
        is_in_string = false;
      }
      continue;
    }
    if (byte == '"') {
      is_in_string = true;
    } else if (byte == '{' || byte == '[') {
      open_brackets_.push_back(static_cast<char>(byte));
    } else if (byte == '}' || byte == ']') {
      const char expected_open = byte == '}' ? '{' : '[';
      if (open_brackets_.empty() || open_brackets_.back() != expected_open) {
        fail_fatal(position, str_cat("mismatched '", static_cast<char>(byte), "' in element ",
                                     next_row_index_));
      }
      open_brackets_.pop_back();
      if (open_brackets_.empty()) return;
    }
  }
}

void JsonArrayReader::finish() {
  input().skip_whitespace();
  if (input().peek() >= 0) {
    fail_fatal(input().position(), str_cat("unexpected ", describe_byte(input().peek()),
                                           " after the array's closing ']'"));
  }
  is_finished_ = true;
}

}  // namespace sluice
