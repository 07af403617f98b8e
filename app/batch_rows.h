// The rows of an OpenAI Batch input file as the job runs them: each line's own prompt (chat
// messages through the model's chat template, or a completion prompt as plain text) and its own
// sampling parameters, the command line's values filling in what a body leaves out.
#pragma once

#include <optional>

#include <memory>
#include <string>

#include "app/batch_request.h"
#include "engine/grammar/grammar_source.h"
#include "engine/input/dataset_row.h"
#include "engine/input/prompt_builder.h"
#include "engine/jobs/row_result.h"
#include "engine/sched/sampling_params.h"
#include "engine/tokenizer/tokenizer.h"

namespace sluice {

struct BatchRow {
  BuiltPrompt prompt;
  // sampling.grammar: the body's structured output, named after the line and the parameter so
  // that the service's compile error says which line and body parameter it comes from.
  SamplingParams sampling;
  bool is_chat = false;             // a /v1/chat/completions line
  std::optional<int64_t> own_seed;  // the body's "seed", as written
};

class BatchRows {
 public:
  // input_path names the file in errors; tokenizer encodes completion prompts without a chat
  // template (null for a remote job: prompts stay text, and a prompt given as token ids is
  // refused). Both must outlive this object. json_options: the job's JSON grammar options, for
  // lines whose body does not give its own schema_mode / json_whitespace.
  BatchRows(std::string input_path, const Tokenizer* tokenizer,
            const JsonGrammarOptions& json_options = {});

  // Returns row's prompt and sampling parameters; chat_builder renders chat messages (the
  // job's PromptBuilder). Throws Error starting "path:line: " when the line is refused
  // (BatchRequests::parse), its chat template fails, or a prompt token id is outside the
  // vocabulary. Its structured output is a source, compiled by the service that runs it.
  BatchRow build(const DatasetRow& row, const PromptBuilder& chat_builder,
                 const SamplingParams& defaults);

  // Returns the prompt and sampling parameters of a stored batch row again (its input line), for
  // running it once more; claims no custom_id, so it may run beside build() on another thread.
  // Throws Error as build() does.
  BatchRow rebuild(const RowResult& stored, const PromptBuilder& chat_builder,
                   const SamplingParams& defaults) const;

  // Remembers a row a resumed job already holds (its custom_id stays taken).
  void remember(const DatasetRow& row) { requests_.remember(row); }

  // As PromptBuilder::set_max_model_len, for completion prompts.
  void set_max_model_len(int max_model_len) { plain_builder_.set_max_model_len(max_model_len); }

 private:
  BuiltPrompt text_prompt(const DatasetRow& row, const CompletionPrompt& prompt) const;
  // Returns the prompt and sampling parameters of a parsed batch line.
  BatchRow build_parsed(const DatasetRow& row, const BatchRequest& batch,
                        const PromptBuilder& chat_builder) const;

  std::string input_path_;
  const Tokenizer* tokenizer_;
  JsonGrammarOptions json_options_;
  BatchRequests requests_;
  PromptBuilder plain_builder_;
};

}  // namespace sluice
