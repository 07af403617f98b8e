#include "engine/input/prompt_builder.h"

#include "engine/core/error.h"
#include "engine/input/dataset_reader.h"

namespace sluice {

PromptBuilder::PromptBuilder(const PromptOptions& options, const std::string& model_chat_template,
                             const Tokenizer& tokenizer, DatasetFormat format,
                             const std::vector<FieldInfo>& fields,
                             const std::string& model_chat_template_origin)
    : PromptBuilder(options, format, fields) {
  tokenizer_ = &tokenizer;
  const bool uses_model_template = options.chat_template.empty();
  const std::string& source = uses_model_template ? model_chat_template : options.chat_template;
  if (options.use_chat_template && !source.empty()) {
    chat_template_ =
        ChatTemplate::compile(source, uses_model_template ? model_chat_template_origin : "");
    chat_template_source_ = source;
    reasoning_format_ = options.reasoning.format.value_or(detect_reasoning_format(source));
  }
  if (tokenizer.bos_id() >= 0) bos_text_ = tokenizer.token_text(tokenizer.bos_id());
  if (tokenizer.eos_id() >= 0) eos_text_ = tokenizer.token_text(tokenizer.eos_id());
}

PromptBuilder::PromptBuilder(const PromptOptions& options, DatasetFormat format,
                             const std::vector<FieldInfo>& fields)
    : options_(options) {
  validate_reasoning_controls(options.reasoning);
  reasoning_format_ = options.reasoning.format.value_or(ReasoningFormat::None);
  column_template_text_ = options.column_template.empty() ? default_column_template(format, fields)
                                                          : options.column_template;
  if (!column_template_text_.empty())
    column_template_ = ColumnTemplate::parse(column_template_text_);
}

Conversation PromptBuilder::conversation_for(const DatasetRow& row) const {
  Conversation messages;
  const bool has_system = !row.messages.empty() && row.messages.front().role == "system";
  if (!options_.system_prompt.empty() && !has_system)
    messages.push_back({"system", options_.system_prompt});
  if (!row.messages.empty()) {
    messages.insert(messages.end(), row.messages.begin(), row.messages.end());
    return messages;
  }
  if (!column_template_) {
    throw DatasetRowError("no column template fits this row; give --prompt-template", row.line,
                          row.row_index);
  }
  try {
    messages.push_back({"user", column_template_->render(row.fields)});
  } catch (const DatasetRowError&) {
    throw;
  } catch (const Error& e) {
    throw DatasetRowError(e.what(), row.line, row.row_index);
  }
  return messages;
}

// Without a chat template the turns are joined as plain text, separated by blank lines.
std::string PromptBuilder::plain_text(const Conversation& messages) const {
  std::string text;
  for (const auto& m : messages) {
    if (!text.empty()) text += "\n\n";
    text += m.content;
  }
  return text;
}

std::string PromptBuilder::refusal_of(const std::string& text) const {
  if (max_model_len_ <= 0 || !tokenizer_) return "";
  const size_t min_num_tokens = tokenizer_->min_num_tokens(text);
  if (min_num_tokens < static_cast<size_t>(max_model_len_)) return "";
  return str_cat("the prompt is ", text.size(), " bytes, at least ", min_num_tokens,
                 " tokens for this tokenizer, but max_model_len is ", max_model_len_,
                 "; it was refused without tokenizing it");
}

std::vector<int32_t> PromptBuilder::encode(const std::string& text) const {
  if (!tokenizer_)
    fail("prompt builder: no tokenizer (the prompt goes to a remote server as text)");
  if (const std::string refusal = refusal_of(text); !refusal.empty()) throw Error(refusal);
  return encode_whole(text);
}

std::vector<int32_t> PromptBuilder::encode_whole(const std::string& text) const {
  if (!tokenizer_)
    fail("prompt builder: no tokenizer (the prompt goes to a remote server as text)");
  EncodeOptions options{.add_bos = tokenizer_->add_bos_default()};
  if (chat_template_) {
    options.parse_special = true;  // <|im_start|> and friends are single tokens
    if (!bos_text_.empty() && text.starts_with(bos_text_)) options.add_bos = false;
  }
  return tokenizer_->encode(text, options);
}

BuiltPrompt PromptBuilder::build(const DatasetRow& row) const {
  return build(row, PromptRequestOptions{.reasoning = options_.reasoning,
                                         .constrained_answer = options_.constrained_answer});
}

BuiltPrompt PromptBuilder::build(const DatasetRow& row, const PromptRequestOptions& request) const {
  BuiltPrompt prompt;
  prompt.messages = conversation_for(row);
  if (chat_template_) {
    try {
      nlohmann::ordered_json variables =
          chat_variables(prompt.messages, /*add_generation_prompt=*/true, bos_text_, eos_text_);
      add_reasoning_variables(request.reasoning, chat_template_source_, variables);
      for (const auto& [name, value] : request.template_kwargs.items()) variables[name] = value;
      prompt.text = chat_template_->render(variables);
    } catch (const Error& e) {
      throw DatasetRowError(str_cat("the chat template failed: ", e.what()), row.line,
                            row.row_index);
    }
  } else {
    prompt.text = plain_text(prompt.messages);
  }
  // The format is the request's override, else the job's (an override, or the template's).
  const ReasoningFormat format = request.reasoning.format.value_or(reasoning_format_);
  prompt.reasoning =
      apply_reasoning_controls(format, request.reasoning, request.constrained_answer, prompt.text);
  prompt.refusal = refusal_of(prompt.text);
  if (prompt.refusal.empty() && tokenizer_) prompt.token_ids = encode(prompt.text);
  return prompt;
}

ReasoningParams PromptBuilder::reasoning_of(std::string& text) const {
  return apply_reasoning_controls(reasoning_format_, options_.reasoning,
                                  options_.constrained_answer, text);
}

}  // namespace sluice
