#include "engine/grammar/regex_grammar.h"

#include <charconv>
#include <cstdio>
#include <optional>

#include "engine/core/error.h"
#include "engine/grammar/utf8_decoder.h"

namespace sluice {
namespace {

GrammarExpr chars_expr(CharClass chars) {
  GrammarExpr expr;
  expr.kind = GrammarExpr::Kind::Chars;
  expr.chars = std::move(chars);
  return expr;
}

GrammarExpr literal_expr(std::string_view text) {
  GrammarExpr expr;
  for (unsigned char c : text) expr.children.push_back(chars_expr(CharClass::single(c)));
  return expr;
}

CharClass digit_class() {
  return CharClass::range('0', '9');
}
CharClass word_class() {
  CharClass chars = CharClass::range('a', 'z');
  chars.add_range('A', 'Z');
  chars.add(digit_class());
  chars.add_range('_', '_');
  return chars;
}
// ECMAScript's \s: its white space and line terminators, Unicode's among them (so \S and [^\s]
// never write a character a JSON Schema validator reads as space).
CharClass space_class() {
  CharClass chars = CharClass::range('\t', '\r');  // \t \n \v \f \r
  chars.add_range(' ', ' ');
  chars.add_range(0xA0, 0xA0);
  chars.add_range(0x1680, 0x1680);
  chars.add_range(0x2000, 0x200A);
  chars.add_range(0x2028, 0x2029);
  chars.add_range(0x202F, 0x202F);
  chars.add_range(0x205F, 0x205F);
  chars.add_range(0x3000, 0x3000);
  chars.add_range(0xFEFF, 0xFEFF);
  return chars;
}

// The characters that a JSON string cannot hold as themselves.
CharClass json_escaped_class() {
  CharClass chars = CharClass::range(0, 0x1F);
  chars.add_range('"', '"');
  chars.add_range('\\', '\\');
  return chars;
}

std::string json_escape(uint32_t cp);

// The expression writing the characters of chars inside a JSON string: as themselves, or
// escaped where JSON needs it.
GrammarExpr json_text_expr(const CharClass& chars) {
  CharClass escaped = json_escaped_class();
  CharClass plain = chars.minus(escaped);
  GrammarExpr choice;
  choice.kind = GrammarExpr::Kind::Choice;
  if (!plain.empty()) choice.children.push_back(chars_expr(plain));
  for (const auto& [lo, hi] : chars.ranges()) {
    for (uint32_t cp = lo; cp <= hi && cp < 0x80; ++cp) {
      if (escaped.contains(cp)) choice.children.push_back(literal_expr(json_escape(cp)));
    }
  }
  if (choice.children.size() == 1) return std::move(choice.children[0]);
  return choice;
}

// The JSON-string spelling of a character that needs an escape.
std::string json_escape(uint32_t cp) {
  switch (cp) {
    case '"':
      return "\\\"";
    case '\\':
      return "\\\\";
    case '\n':
      return "\\n";
    case '\t':
      return "\\t";
    case '\r':
      return "\\r";
    default: {
      char buffer[8];
      std::snprintf(buffer, sizeof buffer, "\\u%04x", cp);
      return buffer;
    }
  }
}

class RegexParser {
 public:
  RegexParser(std::string_view regex, const std::string& source_name, RegexTextMode mode)
      : regex_(regex), source_name_(source_name), mode_(mode) {}

  GrammarExpr parse() {
    if (!regex_.empty() && regex_[0] == '^') ++pos_;
    GrammarExpr expr = parse_alternatives(0);
    if (pos_ < regex_.size()) error("unmatched ')'");
    drop_anchors(expr, /*at_start=*/true, /*at_end=*/true);
    return expr;
  }

 private:
  template <typename... Args>
  [[noreturn]] void error(Args&&... args) const {
    fail(source_name_, ": regular expression, column ", pos_ + 1, ": ",
         std::forward<Args>(args)...);
  }

  bool at_end_anchor() const { return pos_ + 1 == regex_.size() && regex_[pos_] == '$'; }

  GrammarExpr parse_alternatives(int depth) {
    if (depth > kMaxRegexNesting) error("groups nested deeper than ", kMaxRegexNesting);
    GrammarExpr choice;
    choice.kind = GrammarExpr::Kind::Choice;
    choice.children.push_back(parse_sequence(depth));
    while (pos_ < regex_.size() && regex_[pos_] == '|') {
      ++pos_;
      choice.children.push_back(parse_sequence(depth));
    }
    if (choice.children.size() == 1) return std::move(choice.children[0]);
    return choice;
  }

  GrammarExpr parse_sequence(int depth) {
    GrammarExpr sequence;
    while (pos_ < regex_.size() && regex_[pos_] != '|' && regex_[pos_] != ')') {
      if (at_end_anchor()) {
        ++pos_;
        break;
      }
      count_exprs(1);  // the atom's group or repeat, at most
      GrammarExpr atom = parse_atom(depth);
      if (pos_ < regex_.size()) {
        if (auto quantified = parse_quantifier(atom)) {
          atom = std::move(*quantified);
          // A quantifier of a quantifier ("a+++" past the possessive '+', "a{2}*") is refused,
          // as ECMAScript and Python do: nested repeats of one atom only make the grammar
          // ambiguous (a matcher state per way of splitting the text).
          const size_t at = pos_;
          if (pos_ < regex_.size() && parse_quantifier(atom)) {
            pos_ = at;  // the column of the second quantifier
            error("nothing to repeat before '", regex_[at], "'");
          }
        }
      }
      sequence.children.push_back(std::move(atom));
    }
    return sequence;
  }

  std::optional<GrammarExpr> parse_quantifier(GrammarExpr& atom) {
    size_t start = pos_;
    uint32_t min_count = 0, max_count = 0;
    char q = regex_[pos_];
    if (q == '*') {
      max_count = kUnboundedRepeat;
      ++pos_;
    } else if (q == '+') {
      min_count = 1;
      max_count = kUnboundedRepeat;
      ++pos_;
    } else if (q == '?') {
      max_count = 1;
      ++pos_;
    } else if (q == '{') {
      ++pos_;
      auto first = parse_count();
      if (!first) {
        pos_ = start;  // a '{' that starts no count is a literal
        return std::nullopt;
      }
      min_count = max_count = *first;
      if (pos_ < regex_.size() && regex_[pos_] == ',') {
        ++pos_;
        auto second = parse_count();
        max_count = second ? *second : kUnboundedRepeat;
      }
      if (pos_ >= regex_.size() || regex_[pos_] != '}') {
        pos_ = start;
        return std::nullopt;
      }
      ++pos_;
      if (max_count < min_count) error("repeat {", min_count, ",", max_count, "} is reversed");
    } else {
      return std::nullopt;
    }
    if (pos_ < regex_.size() && (regex_[pos_] == '?' || regex_[pos_] == '+')) ++pos_;
    GrammarExpr repeat;
    repeat.kind = GrammarExpr::Kind::Repeat;
    repeat.min_count = min_count;
    repeat.max_count = max_count;
    repeat.children.push_back(std::move(atom));
    return repeat;
  }

  std::optional<uint32_t> parse_count() {
    size_t start = pos_;
    while (pos_ < regex_.size() && regex_[pos_] >= '0' && regex_[pos_] <= '9') ++pos_;
    if (pos_ == start) return std::nullopt;
    uint64_t value = 0;
    auto [end, ec] = std::from_chars(regex_.data() + start, regex_.data() + pos_, value);
    if (ec != std::errc() || value > kMaxGrammarRepeat) {
      pos_ = start;
      error("repeat count past the limit of ", kMaxGrammarRepeat);
    }
    return static_cast<uint32_t>(value);
  }

  GrammarExpr parse_atom(int depth) {
    char c = regex_[pos_];
    switch (c) {
      case '(':
        return parse_group(depth);
      case '[':
        return text_expr(parse_class());
      case '.': {
        ++pos_;
        // ECMAScript's '.': any character but a line terminator.
        CharClass terminators = CharClass::single('\n');
        terminators.add_range('\r', '\r');
        terminators.add_range(0x2028, 0x2029);
        CharClass chars = CharClass::any().minus(terminators);
        return text_expr(chars);
      }
      case '*':
      case '+':
      case '?':
        error("nothing to repeat before '", c, "'");
      case '^':
      case '$': {
        // An anchor inside the expression ("^a$|^b$", "(^x)"): kept as a marker until the
        // whole expression is parsed, then dropped where it always holds (drop_anchors).
        GrammarExpr anchor;
        anchor.kind = GrammarExpr::Kind::RuleRef;
        anchor.rule_name = std::string(1, c);
        anchor.column = ++pos_;
        return anchor;
      }
      case '\\':
        return text_expr(parse_escape(/*in_class=*/false));
      default:
        return text_expr(CharClass::single(parse_literal_char()));
    }
  }

  GrammarExpr parse_group(int depth) {
    ++pos_;  // (
    if (pos_ < regex_.size() && regex_[pos_] == '?') {
      std::string_view rest = regex_.substr(pos_);
      if (rest.starts_with("?:")) {
        pos_ += 2;
      } else if (rest.starts_with("?=") || rest.starts_with("?!")) {
        error("lookahead '(", rest.substr(0, 2), "' is not supported");
      } else if (rest.starts_with("?<=") || rest.starts_with("?<!")) {
        error("lookbehind '(", rest.substr(0, 3), "' is not supported");
      } else if (rest.starts_with("?P<") || rest.starts_with("?<")) {
        size_t close = regex_.find('>', pos_);
        if (close == std::string_view::npos) error("unterminated group name");
        pos_ = close + 1;
      } else if (rest.starts_with("?P=")) {
        error("backreference '(?P=' is not supported");
      } else {
        error("inline flags or group kind '(", rest.substr(0, 2), "' are not supported");
      }
    }
    GrammarExpr inner = parse_alternatives(depth + 1);
    if (pos_ >= regex_.size() || regex_[pos_] != ')') error("missing ')'");
    ++pos_;
    return inner;
  }

  CharClass parse_class() {
    ++pos_;  // [
    bool negated = false;
    if (pos_ < regex_.size() && regex_[pos_] == '^') {
      negated = true;
      ++pos_;
    }
    CharClass chars;
    bool first = true;
    while (pos_ < regex_.size() && (regex_[pos_] != ']' || first)) {
      first = false;
      CharClass lo_class;
      if (regex_[pos_] == '\\') {
        lo_class = parse_escape(/*in_class=*/true);
      } else {
        lo_class = CharClass::single(parse_literal_char());
      }
      bool is_single = lo_class.ranges().size() == 1 &&
                       lo_class.ranges()[0].first == lo_class.ranges()[0].second;
      if (is_single && pos_ + 1 < regex_.size() && regex_[pos_] == '-' && regex_[pos_ + 1] != ']') {
        ++pos_;
        CharClass hi_class =
            regex_[pos_] == '\\' ? parse_escape(true) : CharClass::single(parse_literal_char());
        uint32_t lo = lo_class.ranges()[0].first;
        if (hi_class.ranges().size() != 1 ||
            hi_class.ranges()[0].first != hi_class.ranges()[0].second) {
          error("a class like \\d cannot end a range");
        }
        uint32_t hi = hi_class.ranges()[0].first;
        if (hi < lo) error("character range is reversed");
        chars.add_range(lo, hi);
      } else {
        chars.add(lo_class);
      }
    }
    if (pos_ >= regex_.size()) error("missing ']'");
    ++pos_;
    CharClass result = negated ? chars.complement() : chars;
    if (result.empty()) error("the character class matches nothing");
    return result;
  }

  uint32_t parse_hex(size_t num_digits) {
    if (pos_ + num_digits > regex_.size()) error("incomplete escape");
    uint32_t value = 0;
    auto [end, ec] =
        std::from_chars(regex_.data() + pos_, regex_.data() + pos_ + num_digits, value, 16);
    if (ec != std::errc() || end != regex_.data() + pos_ + num_digits) {
      error("expected ", num_digits, " hex digits");
    }
    pos_ += num_digits;
    return value;
  }

  CharClass parse_escape(bool in_class) {
    size_t start = pos_;
    ++pos_;  // backslash
    if (pos_ >= regex_.size()) error("the expression ends with a backslash");
    char e = regex_[pos_++];
    switch (e) {
      case 'd':
        return digit_class();
      case 'D':
        return digit_class().complement();
      case 'w':
        return word_class();
      case 'W':
        return word_class().complement();
      case 's':
        return space_class();
      case 'S':
        return space_class().complement();
      case 'n':
        return CharClass::single('\n');
      case 't':
        return CharClass::single('\t');
      case 'r':
        return CharClass::single('\r');
      case 'f':
        return CharClass::single('\f');
      case 'v':
        return CharClass::single('\v');
      case '0':
        return CharClass::single(0);
      case 'x':
        return CharClass::single(parse_hex(2));
      case 'u': {
        uint32_t cp = parse_hex(4);
        if (cp >= 0xD800 && cp <= 0xDFFF) error("surrogate code point \\u", std::hex, cp);
        return CharClass::single(cp);
      }
      case 'b':
        if (in_class) return CharClass::single('\b');
        pos_ = start;
        error("word boundary '\\b' is not supported");
      case 'B':
        pos_ = start;
        error("word boundary '\\B' is not supported");
      case 'A':
      case 'z':
      case 'Z':
      case 'G':
        pos_ = start;
        error("anchor '\\", e, "' is not supported");
      case 'k':
        pos_ = start;
        error("backreference '\\k' is not supported");
      case 'p':
      case 'P':
        pos_ = start;
        error("Unicode property class '\\", e, "' is not supported");
      default:
        if (e >= '1' && e <= '9') {
          pos_ = start;
          error("backreference '\\", e, "' is not supported");
        }
        if ((e >= 'a' && e <= 'z') || (e >= 'A' && e <= 'Z')) {
          pos_ = start;
          error("unknown escape '\\", e, "'");
        }
        --pos_;
        return CharClass::single(parse_literal_char());
    }
  }

  uint32_t parse_literal_char() {
    Utf8Decoder decoder;
    size_t start = pos_;
    for (;;) {
      if (pos_ >= regex_.size()) {
        pos_ = start;
        error("invalid UTF-8");
      }
      auto status = decoder.feed(static_cast<uint8_t>(regex_[pos_++]));
      if (status == Utf8Decoder::Status::Invalid) {
        pos_ = start;
        error("invalid UTF-8");
      }
      if (status == Utf8Decoder::Status::Complete) return decoder.code_point();
    }
  }

  static bool is_anchor(const GrammarExpr& expr) {
    return expr.kind == GrammarExpr::Kind::RuleRef &&
           (expr.rule_name == "^" || expr.rule_name == "$");
  }

  // Removes the anchor markers from expr (which starts the text when at_start, and ends it when
  // at_end): '^' where nothing can come before it, '$' where nothing can come after it. Any other
  // anchor is refused, naming its column (it would make its branch match nothing, or need a
  // search rather than a whole match).
  void drop_anchors(GrammarExpr& expr, bool at_start, bool at_end) const {
    switch (expr.kind) {
      case GrammarExpr::Kind::Chars:
      case GrammarExpr::Kind::RuleRef:
        return;
      case GrammarExpr::Kind::Choice:
        for (GrammarExpr& child : expr.children) {
          if (is_anchor(child)) {
            GrammarExpr only_anchor;
            only_anchor.children.push_back(std::move(child));
            child = std::move(only_anchor);
          }
          drop_anchors(child, at_start, at_end);
        }
        return;
      case GrammarExpr::Kind::Repeat:
        if (is_anchor(expr.children.at(0))) refuse_anchor(expr.children[0]);
        drop_anchors(expr.children[0], at_start && expr.max_count <= 1,
                     at_end && expr.max_count <= 1);
        return;
      case GrammarExpr::Kind::Sequence: {
        size_t last = expr.children.size();  // the last child that is not an anchor
        for (size_t i = 0; i < expr.children.size(); ++i) {
          if (!is_anchor(expr.children[i])) last = i;
        }
        bool has_consumed = false;
        std::vector<GrammarExpr> kept;
        for (size_t i = 0; i < expr.children.size(); ++i) {
          GrammarExpr& child = expr.children[i];
          if (is_anchor(child)) {
            bool holds = child.rule_name == "^"
                             ? at_start && !has_consumed
                             : at_end && (last == expr.children.size() || i > last);
            if (!holds) refuse_anchor(child);
            continue;
          }
          drop_anchors(child, at_start && !has_consumed, at_end && i == last);
          has_consumed = true;
          kept.push_back(std::move(child));
        }
        expr.children = std::move(kept);
        return;
      }
    }
  }

  [[noreturn]] void refuse_anchor(const GrammarExpr& anchor) const {
    fail(source_name_, ": regular expression, column ", anchor.column, ": anchor '",
         anchor.rule_name, "' inside the expression is not supported (only where it always holds)");
  }

  // Counts n more expressions of the parse, refused past kMaxGrammarExprs as they are made.
  void count_exprs(size_t n) {
    num_exprs_ += n;
    if (num_exprs_ > kMaxGrammarExprs) {
      error("the expression parses into more than ", kMaxGrammarExprs,
            " characters, classes and groups (the limit of a grammar's text)");
    }
  }

  // The expression writing the characters of chars in the output's text mode.
  GrammarExpr text_expr(const CharClass& chars) {
    count_exprs(1);
    if (mode_ == RegexTextMode::Raw) return chars_expr(chars);
    GrammarExpr expr = json_text_expr(chars);
    if (expr.kind == GrammarExpr::Kind::Choice) {
      for (const GrammarExpr& child : expr.children) count_exprs(1 + child.children.size());
    }
    return expr;
  }

  std::string_view regex_;
  const std::string& source_name_;
  RegexTextMode mode_;
  size_t pos_ = 0;
  size_t num_exprs_ = 0;
};

}  // namespace

GrammarExpr regex_to_expr(std::string_view regex, const std::string& source_name,
                          RegexTextMode mode) {
  return RegexParser(regex, source_name, mode).parse();
}

GrammarExpr json_string_expr(const GrammarExpr& raw) {
  if (raw.kind == GrammarExpr::Kind::Chars) return json_text_expr(raw.chars);
  GrammarExpr out = raw;
  for (GrammarExpr& child : out.children) child = json_string_expr(child);
  return out;
}

Grammar regex_grammar(std::string_view regex, const std::string& source_name) {
  GrammarRuleDef root;
  root.name = "root";
  root.body = regex_to_expr(regex, source_name);
  return Grammar::from_rules({root}, "root", source_name);
}

}  // namespace sluice
