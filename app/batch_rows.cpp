#include "app/batch_rows.h"

#include "engine/core/error.h"
#include "engine/input/dataset_reader.h"

namespace sluice {

namespace {

PromptBuilder plain_builder_for(const Tokenizer* tokenizer) {
  const PromptOptions options{.use_chat_template = false};
  if (!tokenizer) return PromptBuilder(options, DatasetFormat::OpenAiBatch, {});
  return PromptBuilder(options, "", *tokenizer, DatasetFormat::OpenAiBatch, {});
}

}  // namespace

BatchRows::BatchRows(std::string input_path, const Tokenizer* tokenizer,
                     const JsonGrammarOptions& json_options)
    : input_path_(std::move(input_path)),
      tokenizer_(tokenizer),
      json_options_(json_options),
      requests_(input_path_),
      plain_builder_(plain_builder_for(tokenizer)) {}

BuiltPrompt BatchRows::text_prompt(const DatasetRow& row, const CompletionPrompt& prompt) const {
  if (!prompt.is_tokens) {
    DatasetRow plain;
    plain.row_index = row.row_index;
    plain.line = row.line;
    plain.messages = {ChatMessage{"user", prompt.text}};
    BuiltPrompt built = plain_builder_.build(plain);
    built.messages.clear();  // a completion prompt is no conversation
    return built;
  }
  if (!tokenizer_) {
    fail(input_path_, ":", row.line,
         ": a 'prompt' of token ids needs the model's tokenizer; a remote job sends text (run "
         "this file locally)");
  }
  for (const int32_t id : prompt.token_ids) {
    if (id >= tokenizer_->vocab_size()) {
      fail(input_path_, ":", row.line, ": invalid body: token id ", id,
           " in 'prompt' is outside the vocabulary (", tokenizer_->vocab_size(), " tokens)");
    }
  }
  BuiltPrompt built;
  built.token_ids = prompt.token_ids;
  built.text = tokenizer_->decode(prompt.token_ids);
  return built;
}

BatchRow BatchRows::build(const DatasetRow& row, const PromptBuilder& chat_builder,
                          const SamplingParams& defaults) {
  return build_parsed(row, requests_.parse(row, defaults, json_options_), chat_builder);
}

BatchRow BatchRows::rebuild(const RowResult& stored, const PromptBuilder& chat_builder,
                            const SamplingParams& defaults) const {
  DatasetRow row;
  row.row_index = stored.row_index;
  row.line = stored.line;
  row.fields = stored.input;
  BatchRequests requests(input_path_);  // the job's own ids are not this call's to claim
  return build_parsed(row, requests.parse(row, defaults, json_options_), chat_builder);
}

BatchRow BatchRows::build_parsed(const DatasetRow& row, const BatchRequest& batch,
                                 const PromptBuilder& chat_builder) const {
  const CompletionRequest& request = batch.request;
  BatchRow out;
  out.sampling = request.sampling;
  out.is_chat = request.kind == CompletionKind::Chat;
  if (request.has_seed) out.own_seed = static_cast<int64_t>(request.sampling.seed);
  try {
    if (request.kind == CompletionKind::Chat) {
      DatasetRow chat = row;
      chat.messages = request.messages;
      // The line's reasoning_effort and enable_thinking over the job's controls; the answer is
      // constrained by the line's structured output or the job's grammar.
      const PromptOptions& job = chat_builder.options();
      PromptRequestOptions options = prompt_request_options(request, job.reasoning);
      options.constrained_answer |= job.constrained_answer;
      out.prompt = chat_builder.build(chat, options);
      out.sampling.reasoning = out.prompt.reasoning;
    } else {
      out.prompt = text_prompt(row, request.prompts.front());
    }
  } catch (const DatasetRowError& e) {
    fail(input_path_, ":", row.line, ": batch line '", batch.custom_id, "': ", e.what());
  }
  if (request.grammar) {
    GrammarSource source = *request.grammar;
    source.name = str_cat(input_path_, ":", row.line, ": batch line '", batch.custom_id,
                          "': invalid body: '", request.grammar_param, "': ", source.name);
    out.sampling.grammar = std::make_shared<const GrammarSource>(std::move(source));
  }
  return out;
}

}  // namespace sluice
