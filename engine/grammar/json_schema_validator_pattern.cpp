// libstdc++ 12's std::regex compiler trips GCC's -Wmaybe-uninitialized in its NFA states when
// built with the sanitizers (a false positive inside <regex>); silenced for this file only, the
// one place <regex> is instantiated. Set before any include so it covers <regex> itself.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include "engine/grammar/json_schema_validator_pattern.h"

#include <regex>
#include <vector>

#include "engine/core/error.h"
#include "engine/grammar/grammar_matcher.h"
#include "engine/grammar/regex_grammar.h"

namespace sluice {

struct JsonSchemaPattern::StdRegex {
  std::regex regex;
};
namespace {

// ECMA-262's WhiteSpace and LineTerminator (what \s matches), as the inside of a class.
constexpr std::string_view kEcmaSpaces =
    "\\t-\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff";

// One top-level alternative of a pattern rewritten for regex_grammar: ECMA-262's `.` and \s
// spelled out, its anchors removed.
struct RewrittenPattern {
  std::string regex;
  bool is_anchored_start = false;
  bool is_anchored_end = false;
};

// Returns pattern's top-level alternatives in regex_grammar's dialect with ECMA-262's meaning
// ("^a|b$" searches for "a" at the start or "b" at the end), or nullopt when that cannot be
// written (anchors inside an alternative, \S inside a class, an empty class [] or [^], control
// escapes): std::regex then runs it.
std::optional<std::vector<RewrittenPattern>> rewrite_for_regex_grammar(std::string_view pattern) {
  std::vector<RewrittenPattern> alternatives(1);
  bool in_class = false;
  int group_depth = 0;
  for (size_t pos = 0; pos < pattern.size(); ++pos) {
    RewrittenPattern& out = alternatives.back();
    char c = pattern[pos];
    if (c == '\\') {
      if (pos + 1 >= pattern.size()) return std::nullopt;
      char e = pattern[++pos];
      if (e == 's') {
        out.regex += in_class ? std::string(kEcmaSpaces) : str_cat("[", kEcmaSpaces, "]");
      } else if (e == 'S') {
        if (in_class) return std::nullopt;
        out.regex += str_cat("[^", kEcmaSpaces, "]");
      } else if (e == 'c') {
        return std::nullopt;
      } else {
        out.regex += c;
        out.regex += e;
      }
      continue;
    }
    if (in_class) {
      if (c == ']') in_class = false;
      out.regex += c;
      continue;
    }
    switch (c) {
      case '[': {
        in_class = true;
        out.regex += c;
        if (pos + 1 < pattern.size() && pattern[pos + 1] == '^') out.regex += pattern[++pos];
        // ECMA-262's [] matches nothing and [^] anything; regex_grammar reads ']' as a literal.
        if (pos + 1 < pattern.size() && pattern[pos + 1] == ']') return std::nullopt;
        break;
      }
      case '.':
        out.regex += "[^\\n\\r\\u2028\\u2029]";
        break;
      case '^':
        if (group_depth != 0 || !out.regex.empty() || out.is_anchored_start) return std::nullopt;
        out.is_anchored_start = true;
        break;
      case '$':
        if (group_depth != 0 || (pos + 1 != pattern.size() && pattern[pos + 1] != '|'))
          return std::nullopt;
        out.is_anchored_end = true;
        break;
      case '(':
        ++group_depth;
        out.regex += c;
        break;
      case ')':
        --group_depth;
        out.regex += c;
        break;
      case '|':
        if (group_depth == 0) {
          alternatives.emplace_back();
        } else {
          out.regex += c;
        }
        break;
      default:
        out.regex += c;
    }
  }
  return alternatives;
}

GrammarExpr any_text_expr() {
  GrammarExpr any;
  any.kind = GrammarExpr::Kind::Chars;
  any.chars = CharClass::any();
  GrammarExpr repeat;
  repeat.kind = GrammarExpr::Kind::Repeat;
  repeat.min_count = 0;
  repeat.max_count = kUnboundedRepeat;
  repeat.children.push_back(std::move(any));
  return repeat;
}

// The vocabulary of the 256 single bytes, shared by every pattern (matched by accept_bytes).
std::shared_ptr<const TokenVocabulary> byte_vocabulary() {
  static const std::shared_ptr<const TokenVocabulary> vocabulary = [] {
    std::vector<std::string> bytes;
    for (int b = 0; b < 256; ++b) bytes.emplace_back(1, static_cast<char>(b));
    return std::make_shared<const TokenVocabulary>(std::move(bytes), std::vector<int32_t>{});
  }();
  return vocabulary;
}

}  // namespace

std::shared_ptr<const JsonSchemaPattern> JsonSchemaPattern::compile(const std::string& pattern,
                                                                    const std::string& where) {
  auto compiled = std::make_shared<JsonSchemaPattern>();
  compiled->pattern_ = pattern;
  std::string grammar_problem = "its anchors or classes need the std::regex fallback";
  if (auto rewritten = rewrite_for_regex_grammar(pattern)) {
    try {
      GrammarRuleDef root;
      root.name = "root";
      root.body.kind = GrammarExpr::Kind::Choice;
      for (const RewrittenPattern& alternative : *rewritten) {
        GrammarExpr searched;  // a sequence
        if (!alternative.is_anchored_start) searched.children.push_back(any_text_expr());
        searched.children.push_back(regex_to_expr(alternative.regex, where));
        if (!alternative.is_anchored_end) searched.children.push_back(any_text_expr());
        root.body.children.push_back(std::move(searched));
      }
      compiled->grammar_ = std::make_shared<const CompiledGrammar>(
          Grammar::from_rules({root}, "root", where), byte_vocabulary());
      return compiled;
    } catch (const Error& e) {
      grammar_problem = e.what();
    }
  }
  try {
    compiled->std_regex_ =
        std::make_shared<const StdRegex>(StdRegex{std::regex(pattern, std::regex::ECMAScript)});
  } catch (const std::regex_error& e) {
    fail(where, ": pattern \"", pattern, "\" is not supported (", grammar_problem,
         "; std::regex: ", e.what(), ")");
  }
  return compiled;
}

std::optional<bool> JsonSchemaPattern::search(std::string_view text) const {
  if (grammar_) {
    GrammarMatcher matcher(grammar_);
    if (matcher.accept_bytes(text)) return matcher.is_complete();
    if (matcher.rejection_reason().find("not allowed by the grammar") != std::string::npos) {
      return false;
    }
    return std::nullopt;  // the matcher's budget, not the pattern, stopped it
  }
  if (text.size() > kMaxStdRegexSubjectBytes) return std::nullopt;
  return std::regex_search(text.begin(), text.end(), std_regex_->regex);
}

}  // namespace sluice
