#include "engine/grammar/gbnf_parser.h"

#include <charconv>

#include "engine/core/error.h"
#include "engine/grammar/utf8_decoder.h"

namespace sluice {
namespace {

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_';
}

class GbnfParser {
 public:
  GbnfParser(std::string_view text, const std::string& source_name)
      : text_(text), source_name_(source_name) {}

  std::vector<GrammarRuleDef> parse() {
    std::vector<GrammarRuleDef> rules;
    skip_space();
    while (pos_ < text_.size()) {
      GrammarRuleDef rule;
      rule.line = line_;
      rule.column = column();
      rule.name = parse_name();
      skip_space();
      if (text_.substr(pos_, 3) != "::=") error("expected '::=' after rule name '", rule.name, "'");
      advance(3);
      rule.body = parse_alternatives(0);
      skip_space();
      rules.push_back(std::move(rule));
    }
    if (rules.empty()) error("the grammar has no rules");
    return rules;
  }

 private:
  template <typename... Args>
  [[noreturn]] void error(Args&&... args) const {
    fail(source_name_, ":", line_, ":", column(), ": ", std::forward<Args>(args)...);
  }

  size_t column() const { return pos_ - line_start_ + 1; }

  void advance(size_t n) {
    for (size_t i = 0; i < n && pos_ < text_.size(); ++i) {
      if (text_[pos_] == '\n') {
        ++line_;
        line_start_ = pos_ + 1;
      }
      ++pos_;
    }
  }

  void skip_space() {
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
        advance(1);
      } else if (c == '#') {
        while (pos_ < text_.size() && text_[pos_] != '\n') advance(1);
      } else {
        break;
      }
    }
  }

  std::string parse_name() {
    size_t start = pos_;
    while (pos_ < text_.size() && is_name_char(text_[pos_])) advance(1);
    if (pos_ == start) error("expected a rule name");
    return std::string(text_.substr(start, pos_ - start));
  }

  // Whether a `name ::=` starts at the current position (the end of the current rule).
  bool at_rule_start() const {
    size_t p = pos_;
    while (p < text_.size() && is_name_char(text_[p])) ++p;
    if (p == pos_) return false;
    while (p < text_.size() && (text_[p] == ' ' || text_[p] == '\t')) ++p;
    return text_.substr(p, 3) == "::=";
  }

  GrammarExpr parse_alternatives(int depth) {
    if (depth > kMaxGbnfNesting) error("groups nested deeper than ", kMaxGbnfNesting);
    GrammarExpr choice;
    choice.kind = GrammarExpr::Kind::Choice;
    choice.children.push_back(parse_sequence(depth));
    skip_space();
    while (pos_ < text_.size() && text_[pos_] == '|') {
      advance(1);
      choice.children.push_back(parse_sequence(depth));
      skip_space();
    }
    if (choice.children.size() == 1) return std::move(choice.children[0]);
    return choice;
  }

  GrammarExpr parse_sequence(int depth) {
    GrammarExpr sequence;
    for (;;) {
      skip_space();
      if (pos_ >= text_.size()) break;
      char c = text_[pos_];
      if (c == '|' || c == ')' || at_rule_start()) break;
      GrammarExpr item = parse_item(depth);
      skip_space();
      while (pos_ < text_.size() && (text_[pos_] == '*' || text_[pos_] == '+' ||
                                     text_[pos_] == '?' || text_[pos_] == '{')) {
        item = parse_quantifier(std::move(item));
        skip_space();
      }
      sequence.children.push_back(std::move(item));
    }
    return sequence;
  }

  // Counts n more expressions of the parse, refused past kMaxGrammarExprs as they are made.
  void count_exprs(size_t n) {
    num_exprs_ += n;
    if (num_exprs_ > kMaxGrammarExprs) {
      error("the grammar has more than ", kMaxGrammarExprs,
            " characters, classes, references, groups and repeats (the limit of a grammar's text)");
    }
  }

  GrammarExpr parse_item(int depth) {
    count_exprs(1);
    GrammarExpr item;
    item.line = line_;
    item.column = column();
    char c = text_[pos_];
    if (c == '"') {
      advance(1);
      item.kind = GrammarExpr::Kind::Sequence;
      while (pos_ < text_.size() && text_[pos_] != '"') {
        count_exprs(1);
        GrammarExpr ch;
        ch.kind = GrammarExpr::Kind::Chars;
        ch.chars = CharClass::single(parse_char());
        item.children.push_back(std::move(ch));
      }
      if (pos_ >= text_.size()) error("unterminated string literal");
      advance(1);
    } else if (c == '[') {
      advance(1);
      item.kind = GrammarExpr::Kind::Chars;
      item.chars = parse_class_body();
    } else if (c == '.') {
      advance(1);
      item.kind = GrammarExpr::Kind::Chars;
      item.chars = CharClass::any();
    } else if (c == '(') {
      advance(1);
      item = parse_alternatives(depth + 1);
      skip_space();
      if (pos_ >= text_.size() || text_[pos_] != ')') error("expected ')'");
      advance(1);
    } else if (is_name_char(c)) {
      item.kind = GrammarExpr::Kind::RuleRef;
      item.rule_name = parse_name();
    } else {
      error("unexpected character '", c, "'");
    }
    return item;
  }

  CharClass parse_class_body() {
    bool negated = false;
    if (pos_ < text_.size() && text_[pos_] == '^') {
      negated = true;
      advance(1);
    }
    CharClass chars;
    while (pos_ < text_.size() && text_[pos_] != ']') {
      size_t line = line_, col = column();
      uint32_t lo = parse_char();
      uint32_t hi = lo;
      if (pos_ + 1 < text_.size() && text_[pos_] == '-' && text_[pos_ + 1] != ']') {
        advance(1);
        hi = parse_char();
      }
      if (hi < lo) {
        fail(source_name_, ":", line, ":", col, ": character range is reversed");
      }
      chars.add_range(lo, hi);
    }
    if (pos_ >= text_.size()) error("unterminated character class");
    advance(1);
    return negated ? chars.complement() : chars;
  }

  uint32_t parse_hex(size_t num_digits) {
    if (pos_ + num_digits > text_.size()) error("incomplete escape");
    uint32_t value = 0;
    auto digits = text_.substr(pos_, num_digits);
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value, 16);
    if (ec != std::errc() || end != digits.data() + digits.size()) {
      error("expected ", num_digits, " hex digits");
    }
    if (value > kMaxCodePoint) error("code point past U+10FFFF");
    advance(num_digits);
    return value;
  }

  // One (possibly escaped) code point of a literal or class.
  uint32_t parse_char() {
    if (pos_ >= text_.size()) error("unexpected end of the grammar");
    unsigned char c = static_cast<unsigned char>(text_[pos_]);
    if (c == '\\') {
      advance(1);
      if (pos_ >= text_.size()) error("incomplete escape");
      char e = text_[pos_];
      advance(1);
      switch (e) {
        case 'n':
          return '\n';
        case 'r':
          return '\r';
        case 't':
          return '\t';
        case 'x':
          return parse_hex(2);
        case 'u':
          return parse_hex(4);
        case 'U':
          return parse_hex(8);
        case '\\':
        case '"':
        case '[':
        case ']':
        case '-':
        case '^':
        case '/':
        case '.':
          return static_cast<unsigned char>(e);
        default:
          error("unknown escape '\\", e, "'");
      }
    }
    Utf8Decoder decoder;
    size_t start = pos_;
    for (;;) {
      if (pos_ >= text_.size()) error("invalid UTF-8");
      Utf8Decoder::Status status = decoder.feed(static_cast<uint8_t>(text_[pos_]));
      ++pos_;
      if (status == Utf8Decoder::Status::Invalid) {
        pos_ = start;
        error("invalid UTF-8");
      }
      if (status == Utf8Decoder::Status::Complete) return decoder.code_point();
    }
  }

  GrammarExpr parse_quantifier(GrammarExpr item) {
    count_exprs(1);
    GrammarExpr repeat;
    repeat.kind = GrammarExpr::Kind::Repeat;
    repeat.line = line_;
    repeat.column = column();
    char q = text_[pos_];
    advance(1);
    if (q == '*') {
      repeat.min_count = 0;
      repeat.max_count = kUnboundedRepeat;
    } else if (q == '+') {
      repeat.min_count = 1;
      repeat.max_count = kUnboundedRepeat;
    } else if (q == '?') {
      repeat.min_count = 0;
      repeat.max_count = 1;
    } else {
      skip_space();
      repeat.min_count = parse_count();
      skip_space();
      repeat.max_count = repeat.min_count;
      if (pos_ < text_.size() && text_[pos_] == ',') {
        advance(1);
        skip_space();
        repeat.max_count =
            (pos_ < text_.size() && text_[pos_] == '}') ? kUnboundedRepeat : parse_count();
        skip_space();
      }
      if (pos_ >= text_.size() || text_[pos_] != '}') error("expected '}'");
      advance(1);
    }
    repeat.children.push_back(std::move(item));
    return repeat;
  }

  uint32_t parse_count() {
    size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') ++pos_;
    uint64_t value = 0;
    auto digits = text_.substr(start, pos_ - start);
    pos_ = start;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (digits.empty() || ec != std::errc() || value > kMaxGrammarRepeat) {
      error("expected a repeat count from 0 to ", kMaxGrammarRepeat);
    }
    advance(digits.size());
    return static_cast<uint32_t>(value);
  }

  std::string_view text_;
  const std::string& source_name_;
  size_t pos_ = 0;
  size_t line_ = 1;
  size_t line_start_ = 0;
  size_t num_exprs_ = 0;
};

}  // namespace

std::vector<GrammarRuleDef> parse_gbnf_rules(std::string_view text,
                                             const std::string& source_name) {
  return GbnfParser(text, source_name).parse();
}

Grammar parse_gbnf(std::string_view text, const std::string& source_name) {
  return Grammar::from_rules(parse_gbnf_rules(text, source_name), "root", source_name);
}

}  // namespace sluice
