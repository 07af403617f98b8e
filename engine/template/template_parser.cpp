#include "engine/template/template_parser.h"

#include <utility>
#include <vector>

#include "engine/core/error.h"
#include "engine/template/expression_parser.h"
#include "engine/template/source_location.h"
#include "engine/template/template_lexer.h"
#include "engine/template/token_stream.h"

namespace sluice::jinja {

namespace {

constexpr int kMaxBlockDepth = 200;

// The tags that close (or continue) the block being parsed, for the body parser and for the
// messages about a block left open.
struct OpenBlock {
  std::string_view name;  // "for", "if", ...
  std::vector<std::string_view> end_names;
  uint32_t offset;
};

std::string quoted_list(const std::vector<std::string_view>& names) {
  std::string out;
  for (const std::string_view name : names) {
    if (!out.empty()) out += " or ";
    out += str_cat("'", name, "'");
  }
  return out;
}

class TemplateParser {
 public:
  explicit TemplateParser(TokenStream& stream) : stream_(stream), expressions_(stream) {}

  Body parse_all() { return parse_body(nullptr); }

 private:
  // Parses statements until a tag named in block->end_names (left as the current token) or the
  // end of the template (an error when a block is open).
  Body parse_body(const OpenBlock* block) {
    Body body;
    while (true) {
      const Token& token = stream_.current();
      switch (token.kind) {
        case TokenKind::Data:
          append_text(body, stream_.next());
          break;
        case TokenKind::VariableBegin: {
          stream_.next();
          auto output = std::make_unique<OutputStmt>(token.offset, expressions_.parse_tuple());
          stream_.expect(TokenKind::VariableEnd, "end of print statement '}}'");
          body.push_back(std::move(output));
          break;
        }
        case TokenKind::BlockBegin: {
          const uint32_t tag_offset = stream_.next().offset;
          if (block != nullptr && at_any_name(block->end_names)) return body;
          body.push_back(parse_statement(tag_offset, block));
          stream_.expect(TokenKind::BlockEnd, "end of statement block '%}'");
          break;
        }
        case TokenKind::End:
          if (block != nullptr) fail_unclosed(*block);
          return body;
        default:
          stream_.fail(str_cat("unexpected ", stream_.describe_current()));
      }
    }
  }

  void append_text(Body& body, const Token& token) {
    if (!body.empty() && body.back()->kind == StmtKind::Text) {
      static_cast<TextStmt&>(*body.back()).text += token.text;
    } else {
      body.push_back(std::make_unique<TextStmt>(token.offset, token.text));
    }
  }

  bool at_any_name(const std::vector<std::string_view>& names) const {
    for (const std::string_view name : names) {
      if (stream_.at_name(name)) return true;
    }
    return false;
  }

  [[noreturn]] void fail_unclosed(const OpenBlock& block) const {
    stream_.fail_at(block.offset, str_cat("unexpected end of template: the '", block.name,
                                          "' block opened here is never closed (expected ",
                                          quoted_list(block.end_names), ")"));
  }

  // After a tag's header: `%}`, the body, then leaves the closing name current (or consumes it
  // when drop_end_name).
  Body parse_block_body(const OpenBlock& block, bool drop_end_name) {
    if (++block_depth_ > kMaxBlockDepth) stream_.fail("blocks nested too deeply");
    stream_.skip_operator(":");
    stream_.expect(TokenKind::BlockEnd, "end of statement block '%}'");
    Body body = parse_body(&block);
    if (drop_end_name) stream_.next();
    --block_depth_;
    return body;
  }

  StmtPtr parse_statement(uint32_t offset, const OpenBlock* block) {
    if (!stream_.at(TokenKind::Name)) stream_.fail("expected a tag name");
    const std::string name = stream_.current().text;
    if (name == "for") return parse_for(offset);
    if (name == "if") return parse_if(offset);
    if (name == "set") return parse_set(offset);
    if (name == "macro") return parse_macro(offset);
    if (name == "filter") return parse_filter_block(offset);
    if (name == "with" || name == "generation") return parse_scope(offset, name);
    if (name == "print") {
      stream_.next();
      return std::make_unique<OutputStmt>(offset, expressions_.parse_tuple());
    }
    if (name == "break" || name == "continue") {
      if (loop_depth_ == 0) stream_.fail("'" + name + "' outside of a loop");
      stream_.next();
      return std::make_unique<LoopControlStmt>(
          name == "break" ? StmtKind::Break : StmtKind::Continue, offset);
    }
    static constexpr std::string_view kUnsupported[] = {"call",   "block", "extends",    "include",
                                                        "import", "from",  "autoescape", "do"};
    for (const std::string_view unsupported : kUnsupported) {
      if (name == unsupported) stream_.fail("the '" + name + "' tag is not supported");
    }
    fail_unknown_tag(name, block);
  }

  [[noreturn]] void fail_unknown_tag(const std::string& name, const OpenBlock* block) const {
    const bool is_closing = name.rfind("end", 0) == 0 || name == "else" || name == "elif";
    if (!is_closing) stream_.fail(str_cat("unknown tag '", name, "'"));
    if (block == nullptr) stream_.fail(str_cat("unexpected '", name, "' tag: no block is open"));
    stream_.fail(str_cat("unexpected '", name, "' tag: the '", block->name, "' block opened at ",
                         describe_offset(stream_.source(), block->offset), " expects ",
                         quoted_list(block->end_names)));
  }

  StmtPtr parse_for(uint32_t offset) {
    stream_.next();
    auto loop = std::make_unique<ForStmt>(offset);
    loop->target = expressions_.parse_assign_target(false, {"in"});
    stream_.expect_name("in");
    loop->iterable = expressions_.parse_tuple(false, {"recursive"});
    if (stream_.skip_name("if")) loop->condition = expressions_.parse_expression();
    loop->is_recursive = stream_.skip_name("recursive");
    ++loop_depth_;
    const OpenBlock block{"for", {"endfor", "else"}, offset};
    loop->body = parse_block_body(block, false);
    --loop_depth_;
    if (stream_.next().text == "else") {
      loop->else_body = parse_block_body({"for", {"endfor"}, offset}, true);
    }
    return loop;
  }

  StmtPtr parse_if(uint32_t offset) {
    stream_.next();
    auto branch = std::make_unique<IfStmt>(offset);
    const OpenBlock block{"if", {"elif", "else", "endif"}, offset};
    while (true) {
      ExprPtr condition = expressions_.parse_tuple(false);
      Body body = parse_block_body(block, false);
      branch->branches.emplace_back(std::move(condition), std::move(body));
      const std::string end = stream_.next().text;
      if (end == "elif") continue;
      if (end == "else") branch->else_body = parse_block_body({"if", {"endif"}, offset}, true);
      return branch;
    }
  }

  StmtPtr parse_set(uint32_t offset) {
    stream_.next();
    AssignTarget target = expressions_.parse_assign_target(true);
    if (stream_.skip_operator("=")) {
      auto set = std::make_unique<SetStmt>(offset);
      set->target = std::move(target);
      set->value = expressions_.parse_tuple();
      return set;
    }
    auto set_block = std::make_unique<SetBlockStmt>(offset);
    set_block->target = std::move(target);
    while (stream_.skip_operator("|"))
      set_block->filters.push_back(expressions_.parse_filter_call());
    set_block->body = parse_block_body({"set", {"endset"}, offset}, true);
    return set_block;
  }

  StmtPtr parse_macro(uint32_t offset) {
    stream_.next();
    auto macro = std::make_unique<MacroStmt>(offset);
    macro->name = stream_.expect_identifier();
    stream_.expect_operator("(");
    while (!stream_.at_operator(")")) {
      if (!macro->params.empty()) stream_.expect_operator(",");
      MacroParam param;
      param.name = stream_.expect_identifier();
      if (stream_.skip_operator("=")) {
        param.default_value = expressions_.parse_expression();
      } else if (!macro->params.empty() && macro->params.back().default_value) {
        stream_.fail("non-default argument follows default argument");
      }
      macro->params.push_back(std::move(param));
    }
    stream_.expect_operator(")");
    const int outer_loop_depth = std::exchange(loop_depth_, 0);  // a macro body is not in a loop
    macro->body = parse_block_body({"macro", {"endmacro"}, offset}, true);
    loop_depth_ = outer_loop_depth;
    return macro;
  }

  StmtPtr parse_filter_block(uint32_t offset) {
    stream_.next();
    auto filter = std::make_unique<FilterBlockStmt>(offset);
    filter->filters.push_back(expressions_.parse_filter_call());
    while (stream_.skip_operator("|")) filter->filters.push_back(expressions_.parse_filter_call());
    filter->body = parse_block_body({"filter", {"endfilter"}, offset}, true);
    return filter;
  }

  StmtPtr parse_scope(uint32_t offset, const std::string& name) {
    stream_.next();
    auto scope = std::make_unique<ScopeStmt>(offset);
    if (name == "with") {
      while (!stream_.at(TokenKind::BlockEnd)) {
        if (!scope->assignments.empty()) stream_.expect_operator(",");
        std::string target = stream_.expect_identifier();
        stream_.expect_operator("=");
        scope->assignments.emplace_back(std::move(target), expressions_.parse_expression());
      }
      scope->body = parse_block_body({"with", {"endwith"}, offset}, true);
    } else {
      scope->body = parse_block_body({"generation", {"endgeneration"}, offset}, true);
    }
    return scope;
  }

  TokenStream& stream_;
  ExpressionParser expressions_;
  int loop_depth_ = 0;
  int block_depth_ = 0;
};

}  // namespace

TemplateProgram parse_template(std::string source) {
  TemplateProgram program;
  program.source = std::move(source);
  TokenStream stream(program.source, tokenize_template(program.source));
  program.body = TemplateParser(stream).parse_all();
  return program;
}

}  // namespace sluice::jinja
