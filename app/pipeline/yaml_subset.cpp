#include "app/pipeline/yaml_subset.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <vector>

#include "engine/core/error.h"

namespace sluice {

namespace {

using Json = nlohmann::ordered_json;

constexpr int kMaxDepth = 64;

struct Line {
  size_t number = 0;  // 1-based
  size_t indent = 0;  // spaces before the content
  std::string text;   // the content, comment and trailing spaces removed
  std::string raw;    // the whole line (for literal blocks)
};

// Removes a comment (" #" outside quotes, or "#" first) and trailing spaces.
std::string strip_comment(const std::string& s) {
  char quote = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (quote) {
      if (c == '\\' && quote == '"') {
        ++i;
      } else if (c == quote) {
        quote = 0;
      }
      continue;
    }
    if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '#' && (i == 0 || s[i - 1] == ' ' || s[i - 1] == '\t')) {
      std::string out = s.substr(0, i);
      while (!out.empty() && (out.back() == ' ' || out.back() == '\t')) out.pop_back();
      return out;
    }
  }
  std::string out = s;
  while (!out.empty() && (out.back() == ' ' || out.back() == '\t' || out.back() == '\r'))
    out.pop_back();
  return out;
}

class Parser {
 public:
  Parser(std::string_view text, const std::string& name) : name_(name) {
    size_t number = 0;
    for (size_t start = 0; start <= text.size();) {
      size_t end = text.find('\n', start);
      if (end == std::string_view::npos) end = text.size();
      std::string raw(text.substr(start, end - start));
      if (!raw.empty() && raw.back() == '\r') raw.pop_back();
      ++number;
      start = end + 1;
      if (const size_t first = raw.find_first_not_of(' ');
          first != std::string::npos && raw[first] == '\t' &&
          raw.find_first_not_of(" \t") != std::string::npos)
        fail(name_, ":", number, ": a tab indents this line; YAML indents with spaces");
      Line line{number, 0, "", raw};
      line.indent = raw.find_first_not_of(' ');
      if (line.indent == std::string::npos) line.indent = raw.size();
      line.text = strip_comment(raw.substr(line.indent));
      if (line.text == "---" && lines_.empty()) continue;
      if (line.text == "---" || line.text == "...")
        fail(name_, ":", number, ": one document per description");
      lines_.push_back(std::move(line));
      if (end == text.size()) break;
    }
  }

  Json parse() {
    skip_blank();
    if (pos_ >= lines_.size()) fail(name_, ": empty");
    Json value = block(lines_[pos_].indent, 0);
    skip_blank();
    if (pos_ < lines_.size()) fail(name_, ":", lines_[pos_].number, ": unexpected indentation");
    return value;
  }

 private:
  [[noreturn]] void error(size_t number, const std::string& what) const {
    fail(name_, ":", number, ": ", what);
  }

  void skip_blank() {
    while (pos_ < lines_.size() && lines_[pos_].text.empty()) ++pos_;
  }

  static bool is_sequence_item(const std::string& text) {
    return text == "-" || text.rfind("- ", 0) == 0;
  }

  // The block whose lines start at indent.
  Json block(size_t indent, int depth) {
    if (depth > kMaxDepth) error(lines_[pos_].number, "nested deeper than 64 levels");
    return is_sequence_item(lines_[pos_].text) ? sequence(indent, depth) : mapping(indent, depth);
  }

  Json sequence(size_t indent, int depth) {
    Json out = Json::array();
    while (true) {
      skip_blank();
      if (pos_ >= lines_.size() || lines_[pos_].indent != indent ||
          !is_sequence_item(lines_[pos_].text))
        break;
      Line& line = lines_[pos_];
      const size_t number = line.number;
      if (line.text == "-") {
        ++pos_;
        out.push_back(nested(indent, depth, number, /*allow_same_indent_sequence=*/false));
        continue;
      }
      // "- rest": rest is a scalar, or the first entry of a mapping indented past the dash.
      const std::string rest = line.text.substr(2);
      const size_t offset = rest.find_first_not_of(' ');
      const std::string item = rest.substr(offset);
      if (is_sequence_item(item) || key_of(item)) {
        line.indent = indent + 2 + offset;
        line.text = item;
        out.push_back(block(line.indent, depth + 1));
      } else {
        ++pos_;
        out.push_back(scalar(item, number));
      }
    }
    return out;
  }

  // The key of a "key: value" or "key:" line, or nullopt.
  static std::optional<std::pair<std::string, std::string>> key_of(const std::string& text) {
    if (text.empty() || text[0] == '[' || text[0] == '{') return std::nullopt;
    size_t colon;
    std::string key;
    if (text[0] == '"' || text[0] == '\'') {
      const size_t close = text.find(text[0], 1);
      if (close == std::string::npos) return std::nullopt;
      key = text.substr(1, close - 1);
      colon = close + 1;
      if (colon >= text.size() || text[colon] != ':') return std::nullopt;
    } else {
      colon = text.find(": ");
      if (colon == std::string::npos) {
        if (text.back() != ':') return std::nullopt;
        colon = text.size() - 1;
      }
      key = text.substr(0, colon);
    }
    std::string value = colon + 1 < text.size() ? text.substr(colon + 1) : "";
    const size_t start = value.find_first_not_of(' ');
    value = start == std::string::npos ? "" : value.substr(start);
    return std::make_pair(key, value);
  }

  Json mapping(size_t indent, int depth) {
    Json out = Json::object();
    while (true) {
      skip_blank();
      if (pos_ >= lines_.size() || lines_[pos_].indent != indent) break;
      const Line& line = lines_[pos_];
      if (is_sequence_item(line.text)) error(line.number, "a list item where a key was expected");
      const auto entry = key_of(line.text);
      if (!entry) error(line.number, "expected \"key: value\"");
      const auto& [key, value] = *entry;
      if (out.contains(key)) error(line.number, "the key \"" + key + "\" appears twice");
      const size_t number = line.number;
      ++pos_;
      if (value.empty()) {
        out[key] = nested(indent, depth, number, /*allow_same_indent_sequence=*/true);
      } else if (value == "|" || value == "|-") {
        out[key] = literal(indent, value == "|-");
      } else if (value[0] == '>' || value[0] == '&' || value[0] == '*' || value[0] == '!') {
        error(number, "anchors, aliases, tags and folded blocks are not read here");
      } else {
        out[key] = scalar(value, number);
      }
    }
    return out;
  }

  // The value of "key:" or "-" on its own: a block indented more (or, after a key, a sequence at
  // the key's indent), or null when none follows.
  Json nested(size_t indent, int depth, size_t number, bool allow_same_indent_sequence) {
    skip_blank();
    if (pos_ < lines_.size()) {
      const Line& next = lines_[pos_];
      if (next.indent > indent) return block(next.indent, depth + 1);
      if (allow_same_indent_sequence && next.indent == indent && is_sequence_item(next.text))
        return sequence(indent, depth + 1);
    }
    (void)number;
    return nullptr;
  }

  // A literal block: the following lines indented past indent, kept as written.
  std::string literal(size_t indent, bool strip) {
    std::string text;
    size_t block_indent = std::string::npos;
    while (pos_ < lines_.size()) {
      const Line& line = lines_[pos_];
      const bool blank = line.raw.find_first_not_of(' ') == std::string::npos;
      if (!blank && line.indent <= indent) break;
      if (!blank && block_indent == std::string::npos) block_indent = line.indent;
      text += blank ? "" : line.raw.substr(std::min(block_indent, line.raw.size()));
      text += "\n";
      ++pos_;
    }
    while (text.size() >= 2 && text[text.size() - 1] == '\n' && text[text.size() - 2] == '\n')
      text.pop_back();
    if (strip && !text.empty() && text.back() == '\n') text.pop_back();
    return text;
  }

  Json scalar(const std::string& text, size_t number) const {
    if (text.empty()) return nullptr;
    if (text[0] == '"') return double_quoted(text, number);
    if (text[0] == '\'') {
      std::string out;
      size_t i = 1;
      for (; i < text.size(); ++i) {
        if (text[i] == '\'') {
          if (i + 1 < text.size() && text[i + 1] == '\'') {
            out += '\'';
            ++i;
            continue;
          }
          break;
        }
        out += text[i];
      }
      if (i >= text.size() || i + 1 != text.size())
        error(number, "a quoted value must end the line");
      return out;
    }
    if (text[0] == '[') return flow_sequence(text, number);
    if (text == "{}") return Json::object();
    if (text[0] == '{')
      error(number, "flow mappings are not read here; write the keys in block style");
    if (text[0] == '&' || text[0] == '*' || text[0] == '!' || text[0] == '|' || text[0] == '>')
      error(number, "anchors, aliases, tags and block scalars are not read here");
    return plain(text);
  }

  static bool is_digit(char c) { return c >= '0' && c <= '9'; }

  // [-+]?[0-9]+
  static bool is_integer(const std::string& t) {
    size_t i = t[0] == '-' || t[0] == '+' ? 1 : 0;
    if (i >= t.size()) return false;
    for (; i < t.size(); ++i)
      if (!is_digit(t[i])) return false;
    return true;
  }

  // [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?  (YAML 1.2's core schema float)
  static bool is_float(const std::string& t) {
    size_t i = t[0] == '-' || t[0] == '+' ? 1 : 0;
    size_t digits = 0;
    for (; i < t.size() && is_digit(t[i]); ++i) ++digits;
    if (i < t.size() && t[i] == '.') {
      ++i;
      size_t fraction = 0;
      for (; i < t.size() && is_digit(t[i]); ++i) ++fraction;
      if (digits == 0 && fraction == 0) return false;
    } else if (digits == 0) {
      return false;
    }
    if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
      ++i;
      if (i < t.size() && (t[i] == '-' || t[i] == '+')) ++i;
      size_t exponent = 0;
      for (; i < t.size() && is_digit(t[i]); ++i) ++exponent;
      if (exponent == 0) return false;
    }
    return i == t.size();
  }

  static Json plain(const std::string& text) {
    if (text == "true" || text == "True" || text == "TRUE") return true;
    if (text == "false" || text == "False" || text == "FALSE") return false;
    if (text == "null" || text == "Null" || text == "NULL" || text == "~") return nullptr;
    if (text.size() < 40 && is_integer(text)) {
      errno = 0;
      const long long v = std::strtoll(text.c_str(), nullptr, 10);
      if (errno == 0) return v;
    }
    if (text.size() < 60 && is_float(text)) {
      const double v = std::strtod(text.c_str(), nullptr);
      if (std::isfinite(v)) return v;
    }
    return text;
  }

  Json double_quoted(const std::string& text, size_t number) const {
    std::string out;
    size_t i = 1;
    for (; i < text.size() && text[i] != '"'; ++i) {
      if (text[i] != '\\') {
        out += text[i];
        continue;
      }
      if (++i >= text.size()) break;
      switch (text[i]) {
        case 'n':
          out += '\n';
          break;
        case 't':
          out += '\t';
          break;
        case 'r':
          out += '\r';
          break;
        case '0':
          out += '\0';
          break;
        case '"':
        case '\\':
        case '/':
          out += text[i];
          break;
        case 'u': {
          if (i + 4 >= text.size()) error(number, "a \\u escape needs four hex digits");
          const unsigned long cp = std::strtoul(text.substr(i + 1, 4).c_str(), nullptr, 16);
          i += 4;
          if (cp < 0x80) {
            out += static_cast<char>(cp);
          } else if (cp < 0x800) {
            out += static_cast<char>(0xC0 | (cp >> 6));
            out += static_cast<char>(0x80 | (cp & 0x3F));
          } else {
            out += static_cast<char>(0xE0 | (cp >> 12));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (cp & 0x3F));
          }
          break;
        }
        default:
          error(number, std::string("unknown escape \\") + text[i]);
      }
    }
    if (i >= text.size() || i + 1 != text.size()) error(number, "a quoted value must end the line");
    return out;
  }

  Json flow_sequence(const std::string& text, size_t number) const {
    if (text.back() != ']') error(number, "a [ list must end on its line with ]");
    Json out = Json::array();
    const std::string inner = text.substr(1, text.size() - 2);
    size_t i = 0;
    while (i < inner.size()) {
      while (i < inner.size() && inner[i] == ' ') ++i;
      if (i >= inner.size()) break;
      size_t end = i;
      if (inner[i] == '"' || inner[i] == '\'') {
        const char q = inner[i];
        end = i + 1;
        while (end < inner.size() && inner[end] != q) end += inner[end] == '\\' && q == '"' ? 2 : 1;
        ++end;
      } else {
        if (inner[i] == '[' || inner[i] == '{')
          error(number, "nested flow collections are not read here");
        end = inner.find(',', i);
        if (end == std::string::npos) end = inner.size();
      }
      std::string item = inner.substr(i, std::min(end, inner.size()) - i);
      while (!item.empty() && item.back() == ' ') item.pop_back();
      out.push_back(scalar(item, number));
      i = end;
      while (i < inner.size() && inner[i] == ' ') ++i;
      if (i < inner.size()) {
        if (inner[i] != ',') error(number, "expected , between list items");
        ++i;
      }
    }
    return out;
  }

  std::string name_;
  std::vector<Line> lines_;
  size_t pos_ = 0;
};

}  // namespace

Json parse_yaml_subset(std::string_view text, const std::string& name) {
  return Parser(text, name).parse();
}

}  // namespace sluice
