#include "engine/grammar/grammar_check.h"

#include <algorithm>
#include <cassert>

#include "engine/core/error.h"
#include "engine/grammar/grammar_matcher.h"
#include "engine/grammar/json_schema_grammar.h"
#include "engine/tokenizer/tokenizer.h"

namespace sluice {
namespace {

// One token per byte and no stop token: texts checked without a model's vocabulary.
std::shared_ptr<const TokenVocabulary> byte_vocabulary() {
  std::vector<std::string> bytes;
  for (int b = 0; b < 256; ++b) bytes.emplace_back(1, static_cast<char>(b));
  return std::make_shared<TokenVocabulary>(std::move(bytes), std::vector<int32_t>{});
}

// The index of the first byte of bytes that matcher refuses (bytes.size() when it takes them all
// one at a time: a refusal for depth or ambiguity, not a byte).
size_t first_refused_byte(const GrammarMatcher& matcher, std::string_view bytes) {
  GrammarMatcher copy = matcher;
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (!copy.accept_bytes(bytes.substr(i, 1))) return i;
  }
  return bytes.size();
}

// bytes quoted for a message: printable ASCII as it is, other bytes as \xNN.
std::string quoted_bytes(std::string_view bytes) {
  std::string out = "'";
  for (const char c : bytes) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte < 0x7f) {
      out += c;
    } else {
      constexpr char kHex[] = "0123456789abcdef";
      out += {'\\', 'x', kHex[byte >> 4], kHex[byte & 15]};
    }
  }
  return out + "'";
}

std::string describe_source(const GrammarSource& source) {
  std::string out = to_string(source.kind);
  if (source.kind == GrammarSourceKind::JsonSchema) {
    out += str_cat(" (", to_string(source.schema_mode), ", ", to_string(source.whitespace),
                   " whitespace)");
  } else if (source.kind == GrammarSourceKind::JsonObject) {
    out += str_cat(" (", to_string(source.whitespace), " whitespace)");
  } else if (source.kind == GrammarSourceKind::Choice) {
    out += str_cat(" (", source.choices.size(), " texts)");
  }
  return out;
}

// Compiles a JSON Schema source into report, with its notes and enforced keywords.
void compile_schema(const GrammarSource& source, GrammarCompileReport& report) {
  JsonSchemaNotes notes;
  report.grammar = std::make_shared<const Grammar>(
      json_schema_grammar(source.text, source.name,
                          {.whitespace = source.whitespace, .mode = source.schema_mode}, &notes));
  report.ignored = notes.ignored;
  report.dropped = notes.dropped;
  std::vector<std::string> skipped;
  for (const auto* list : {&notes.ignored, &notes.dropped}) {
    for (const JsonSchemaNote& note : *list) skipped.push_back(note.pointer);
  }
  // The text parsed for the compile, so it is JSON here.
  const SchemaJson schema = SchemaJson::parse(source.text);
  report.enforced = enforced_schema_keywords(schema, skipped);
}

}  // namespace

GrammarCompileReport compile_for_check(const GrammarSource& source) {
  GrammarCompileReport report;
  try {
    if (source.kind == GrammarSourceKind::JsonSchema) {
      compile_schema(source, report);
    } else {
      report.grammar = std::make_shared<const Grammar>(build_grammar(source));
    }
    report.summary = str_cat(describe_source(source), ": ", report.grammar->num_rules(), " rules, ",
                             report.grammar->num_positions(), " positions");
  } catch (const SchemaRefusal& e) {
    report.grammar.reset();
    report.error = e.what();
    report.refused_pointer = e.keyword_pointer().empty() ? "/" : e.keyword_pointer();
  } catch (const Error& e) {
    report.grammar.reset();
    report.error = e.what();
  } catch (const nlohmann::json::exception& e) {
    report.grammar.reset();
    report.error = str_cat(source.name, ": ", e.what());
  }
  return report;
}

GrammarTextCheck::GrammarTextCheck(const GrammarSource& source, const GrammarCompileReport& report,
                                   const Tokenizer* tokenizer,
                                   std::shared_ptr<const TokenVocabulary> vocabulary)
    : tokenizer_(tokenizer) {
  assert(report.is_compiled());  // precondition
  if (!vocabulary)
    vocabulary = tokenizer ? TokenVocabulary::from_tokenizer(*tokenizer) : byte_vocabulary();
  speller_ = std::make_unique<const TextSpeller>(tokenizer, vocabulary);
  compiled_ = std::make_shared<const CompiledGrammar>(*report.grammar, std::move(vocabulary));
  if (source.kind == GrammarSourceKind::JsonSchema) output_check_.emplace(source, report.grammar);
}

TextVerdict GrammarTextCheck::check(std::string_view text) const {
  TextVerdict verdict;
  const TokenVocabulary& vocabulary = compiled_->vocabulary();
  const TextSpelling spelling = speller_->spell(text);
  verdict.num_tokens = spelling.token_ids.size();
  verdict.spelling_note = spelling.note;
  if (output_check_) verdict.by_source = output_check_->check(text);
  const auto refuse = [&](size_t token_idx, size_t byte_offset, std::string reason) {
    verdict.token_idx = token_idx;
    verdict.byte_offset = byte_offset;
    verdict.reason = std::move(reason);
    return verdict;
  };
  GrammarMatcher matcher(compiled_);
  std::vector<uint32_t> mask(vocabulary.num_mask_words());
  // Steps id as the sampler would: the mask first, then the matcher; false when either refuses.
  const auto step = [&](int32_t id, size_t token_idx) {
    std::fill(mask.begin(), mask.end(), 0u);
    matcher.fill_next_token_mask(mask);
    const bool is_in_mask = test_token_bit(mask, id);
    const bool is_accepted = matcher.accept_token(id);
    if (is_in_mask != is_accepted) {
      verdict.is_mask_mismatch = true;
      verdict.reason =
          str_cat("token ", id, " is ", is_in_mask ? "" : "not ",
                  "in the next-token mask but accept_token says ", is_accepted, " (a matcher bug)");
      return false;
    }
    if (!is_accepted) verdict.reason = matcher.rejection_reason();
    verdict.token_idx = token_idx;
    return is_accepted;
  };
  for (size_t i = 0; i < spelling.token_ids.size(); ++i) {
    const int32_t id = spelling.token_ids[i];
    if (step(id, i)) continue;
    if (verdict.is_mask_mismatch) return refuse(i, spelling.byte_offsets[i], verdict.reason);
    // The matcher is as it was before the token: find the byte it refuses.
    const std::string& bytes = vocabulary.token_bytes(id);
    const size_t byte_idx = first_refused_byte(matcher, bytes);
    if (byte_idx == bytes.size()) return refuse(i, spelling.byte_offsets[i], verdict.reason);
    return refuse(i, spelling.byte_offsets[i] + byte_idx,
                  str_cat(quoted_bytes(std::string_view(bytes).substr(byte_idx, 1)),
                          " is not allowed here (token ", id, " ", quoted_bytes(bytes), ")"));
  }
  const size_t num_tokens = spelling.token_ids.size();
  if (!spelling.is_complete) {
    return refuse(num_tokens, spelling.unspelled_offset,
                  "no token of the vocabulary spells the text from here");
  }
  if (!matcher.is_complete())
    return refuse(num_tokens, text.size(), "the text ends before the grammar is complete");
  if (!vocabulary.stop_ids().empty() && !step(vocabulary.stop_ids().front(), num_tokens))
    return refuse(num_tokens, text.size(), "stop token refused: " + verdict.reason);
  verdict.is_accepted = true;
  verdict.token_idx = num_tokens;
  verdict.byte_offset = text.size();
  return verdict;
}

std::string describe_text_verdict(const TextVerdict& verdict) {
  std::string out = verdict.is_accepted
                        ? str_cat("grammar: accepted (", verdict.num_tokens, " tokens)")
                        : str_cat("grammar: refused at token ", verdict.token_idx, " (byte ",
                                  verdict.byte_offset, "): ", verdict.reason);
  if (verdict.by_source) {
    if (verdict.by_source->is_valid) {
      out += verdict.is_accepted ? "; schema: valid" : "; schema: valid (a narrowing)";
    } else {
      out += "; schema: invalid: " + verdict.by_source->reason;
    }
  }
  return out;
}

}  // namespace sluice
