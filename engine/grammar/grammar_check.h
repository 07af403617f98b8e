// What `sluice grammar check` reports: a grammar source compiled as a job would compile it (what
// it enforces, ignores, drops, or why it is refused), and texts checked through the token-level
// matcher the sampler uses — each token must be in the matcher's next-token mask and accepted,
// then the grammar complete and a stop token allowed — beside the verdict of what the source
// means (a schema's full validator). The two verdicts differ exactly where the grammar narrows
// the schema (json_schema_grammar.h): "grammar: refused at token 7; schema: valid".
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/grammar/compiled_grammar.h"
#include "engine/grammar/grammar_source.h"
#include "engine/grammar/json_schema_enforced.h"
#include "engine/grammar/output_check.h"
#include "engine/grammar/text_spelling.h"

namespace sluice {

class Tokenizer;

struct GrammarCompileReport {
  std::shared_ptr<const Grammar> grammar;  // null when the source did not compile
  std::string error;                       // why not, when !grammar
  std::string refused_pointer;             // a SchemaRefusal's keyword pointer, else ""
  std::vector<EnforcedKeywords> enforced;  // JSON Schema sources
  std::vector<JsonSchemaNote> ignored;     // JSON Schema sources
  std::vector<JsonSchemaNote> dropped;     // JSON Schema sources, best-effort mode
  std::string summary;  // "json_schema (strict, flexible whitespace): 12 rules, 340 positions"

  bool is_compiled() const { return grammar != nullptr; }
  bool is_refused() const { return !refused_pointer.empty(); }
};

// Returns the report of compiling source. Never throws for a source that does not compile
// (sluice::Error is the report's error).
GrammarCompileReport compile_for_check(const GrammarSource& source);

struct TextVerdict {
  bool is_accepted = false;  // by the grammar, token by token
  size_t num_tokens = 0;     // of the text's spelling
  // Where the grammar refused: the token's index (num_tokens when the text ended incomplete or
  // the stop token was refused) and the byte it starts at (the text's size at the end).
  size_t token_idx = 0;
  size_t byte_offset = 0;
  std::string reason;             // the matcher's rejection_reason(), or why the end was refused
  bool is_mask_mismatch = false;  // the mask and accept_token disagreed on a token: a bug
  std::string spelling_note;      // how the token ids depart from the tokenizer's encoding
  std::optional<OutputVerdict> by_source;  // JSON Schema sources: the full validator's
};

class GrammarTextCheck {
 public:
  // tokenizer null: texts are checked byte by byte (one token per byte, no stop token).
  // vocabulary: the tokenizer's, when the caller has it (else built here). tokenizer must
  // outlive this object. Precondition: report.is_compiled().
  GrammarTextCheck(const GrammarSource& source, const GrammarCompileReport& report,
                   const Tokenizer* tokenizer,
                   std::shared_ptr<const TokenVocabulary> vocabulary = nullptr);

  TextVerdict check(std::string_view text) const;
  bool is_byte_level() const { return tokenizer_ == nullptr; }

 private:
  const Tokenizer* tokenizer_;
  std::shared_ptr<const CompiledGrammar> compiled_;
  std::unique_ptr<const TextSpeller> speller_;
  std::optional<OutputCheck> output_check_;  // JSON Schema sources
};

// Returns one line for verdict: "accepted (12 tokens)" or "refused at token 7 (byte 12): <why>",
// then "; schema: valid (a narrowing)" / "; schema: invalid: <why>" when the source judged it.
std::string describe_text_verdict(const TextVerdict& verdict);

}  // namespace sluice
