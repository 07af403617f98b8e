// A cursor over the lexer's tokens for the parsers, with the checks they share and syntax
// errors that name the line and column of the offending token.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "engine/template/template_lexer.h"

namespace sluice::jinja {

class TokenStream {
 public:
  TokenStream(std::string_view source, std::vector<Token> tokens);

  // Returns the token at the cursor.
  const Token& current() const { return tokens_[index_]; }
  // Returns the token `ahead` places after the current one (End past the end).
  const Token& peek(size_t ahead = 1) const;
  // Returns the current token and moves past it (never past End).
  const Token& next();

  // Returns true when the current token is the name given.
  bool at_name(std::string_view name) const;
  // Returns true when the current token is the operator given.
  bool at_operator(std::string_view op) const;
  // Returns true when the current token is of kind.
  bool at(TokenKind kind) const { return current().kind == kind; }
  // Consumes the current token when it is the name given; returns whether it did.
  bool skip_name(std::string_view name);
  // Consumes the current token when it is the operator given; returns whether it did.
  bool skip_operator(std::string_view op);

  // Consumes and returns the current token, or fails with "expected <what>".
  const Token& expect(TokenKind kind, std::string_view what);
  // Consumes the operator op, or fails.
  void expect_operator(std::string_view op);
  // Consumes the name (keyword) given, or fails.
  void expect_name(std::string_view name);
  // Consumes a name token and returns its text.
  std::string expect_identifier();

  // Throws a syntax error at the current token.
  [[noreturn]] void fail(const std::string& message) const;
  // Throws a syntax error at offset.
  [[noreturn]] void fail_at(size_t offset, const std::string& message) const;
  // Describes the current token for "unexpected ..." messages.
  std::string describe_current() const;

  // Returns the normalized template source the tokens point into.
  std::string_view source() const { return source_; }

 private:
  std::string_view source_;
  std::vector<Token> tokens_;
  size_t index_ = 0;
};

}  // namespace sluice::jinja
