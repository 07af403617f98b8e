#include "engine/template/token_stream.h"

#include <algorithm>
#include <utility>

#include "engine/core/error.h"
#include "engine/template/source_location.h"

namespace sluice::jinja {

TokenStream::TokenStream(std::string_view source, std::vector<Token> tokens)
    : source_(source), tokens_(std::move(tokens)) {}

const Token& TokenStream::peek(size_t ahead) const {
  return tokens_[std::min(index_ + ahead, tokens_.size() - 1)];
}

const Token& TokenStream::next() {
  const Token& token = tokens_[index_];
  if (index_ + 1 < tokens_.size()) ++index_;
  return token;
}

bool TokenStream::at_name(std::string_view name) const {
  return current().kind == TokenKind::Name && current().text == name;
}

bool TokenStream::at_operator(std::string_view op) const {
  return current().kind == TokenKind::Operator && current().text == op;
}

bool TokenStream::skip_name(std::string_view name) {
  if (!at_name(name)) return false;
  next();
  return true;
}

bool TokenStream::skip_operator(std::string_view op) {
  if (!at_operator(op)) return false;
  next();
  return true;
}

const Token& TokenStream::expect(TokenKind kind, std::string_view what) {
  if (current().kind != kind) {
    fail(str_cat("expected ", what, ", got ", describe_current()));
  }
  return next();
}

void TokenStream::expect_operator(std::string_view op) {
  if (!skip_operator(op)) fail(str_cat("expected '", op, "', got ", describe_current()));
}

void TokenStream::expect_name(std::string_view name) {
  if (!skip_name(name)) fail(str_cat("expected '", name, "', got ", describe_current()));
}

std::string TokenStream::expect_identifier() {
  return expect(TokenKind::Name, "a name").text;
}

void TokenStream::fail(const std::string& message) const {
  fail_at(current().offset, message);
}

void TokenStream::fail_at(size_t offset, const std::string& message) const {
  fail_syntax(source_, offset, message);
}

std::string TokenStream::describe_current() const {
  const Token& token = current();
  switch (token.kind) {
    case TokenKind::Data:
      return "template text";
    case TokenKind::VariableBegin:
      return "'{{'";
    case TokenKind::VariableEnd:
      return "end of print statement '}}'";
    case TokenKind::BlockBegin:
      return "'{%'";
    case TokenKind::BlockEnd:
      return "end of statement block '%}'";
    case TokenKind::String:
      return "a string";
    case TokenKind::Integer:
    case TokenKind::Float:
      return "number '" + token.text + "'";
    case TokenKind::End:
      return "end of template";
    default:
      return "'" + token.text + "'";
  }
}

}  // namespace sluice::jinja
