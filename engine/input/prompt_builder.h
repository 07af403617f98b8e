// Turns a dataset row into the exact prompt the model sees: the column template fills in the
// user turn (or the row's own conversation is used, for chat formats), an optional system
// prompt is added, then the model's chat template renders it (or the text is used as a plain
// completion when there is no template), and the tokenizer encodes it with the model's BOS
// rule — never a second BOS when the rendered text already starts with it. A thinking model's
// reasoning controls (engine/reasoning/reasoning_prompt.h) set the template's variables and
// adjust the rendered text; the built prompt carries the ReasoningParams its request runs with.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/input/column_template.h"
#include "engine/input/dataset_format.h"
#include "engine/input/dataset_row.h"
#include "engine/input/field_discovery.h"
#include "engine/reasoning/reasoning_prompt.h"
#include "engine/template/chat_template.h"
#include "engine/tokenizer/tokenizer.h"

namespace sluice {

struct PromptOptions {
  std::string column_template;  // "{instruction}[\n\n{input}]"; empty: the format's default
  std::string system_prompt;    // empty: none
  bool use_chat_template = true;
  std::string chat_template;    // template source replacing the model's own; empty: the model's
  ReasoningControls reasoning;  // thinking on/off, effort, budget, format override
  // The answer is constrained by a grammar: the reasoning block is opened for the model so the
  // grammar starts when it ends. Set by whoever runs the rows (not a stored option).
  bool constrained_answer = false;
};

// What one request (an HTTP request, a batch line) asks beyond the job's PromptOptions.
struct PromptRequestOptions {
  ReasoningControls reasoning;
  bool constrained_answer = false;
  // More template variables (vLLM's chat_template_kwargs); they override the reasoning's.
  nlohmann::ordered_json template_kwargs = nlohmann::ordered_json::object();
};

struct BuiltPrompt {
  Conversation messages;           // what the chat template saw (or would have)
  std::string text;                // the exact prompt text
  std::vector<int32_t> token_ids;  // what the engine runs; empty when refused
  std::string refusal;             // why the prompt was not encoded (see set_max_model_len)
  ReasoningParams reasoning;       // how the engine treats the reasoning of its output
};

class PromptBuilder {
 public:
  // model_chat_template: the model's own template, or "" when it has none. fields: from
  // discover_fields, used to pick the default column template. model_chat_template_origin
  // (Model::chat_template_origin) starts the template's errors. Throws Error when a template
  // does not compile.
  PromptBuilder(const PromptOptions& options, const std::string& model_chat_template,
                const Tokenizer& tokenizer, DatasetFormat format,
                const std::vector<FieldInfo>& fields,
                const std::string& model_chat_template_origin = "");

  // For a remote server, which tokenizes and applies its own chat template: build() gives the
  // conversation and its plain text (the turns joined by blank lines) and no token ids; encode()
  // throws. Throws Error when the column template does not compile.
  PromptBuilder(const PromptOptions& options, DatasetFormat format,
                const std::vector<FieldInfo>& fields);

  // Builds the prompt of one row. Throws DatasetRowError (with the row's line; the message does
  // not repeat it) when it cannot: a missing field, the chat template raising an error.
  BuiltPrompt build(const DatasetRow& row) const;
  // The same with a request's own reasoning controls and template variables.
  BuiltPrompt build(const DatasetRow& row, const PromptRequestOptions& request) const;

  // The reasoning parameters of prompt text built before (a resumed job's stored prompt): the
  // job's controls applied again (they leave a text they adjusted as it is).
  ReasoningParams reasoning_of(std::string& text) const;
  // The format outputs are split by: the controls' override, else the chat template's.
  ReasoningFormat reasoning_format() const { return reasoning_format_; }

  // Encodes prompt text as build() does (BOS rule, special tokens when a chat template is used).
  // Throws Error with the refusal when the text cannot fit max_model_len (see below).
  std::vector<int32_t> encode(const std::string& text) const;
  // Encodes text as encode() does, however long (no max_model_len check): for a prompt that is
  // truncated to the context afterwards.
  std::vector<int32_t> encode_whole(const std::string& text) const;

  // From now on, a prompt whose text certainly encodes to max_model_len tokens or more (the
  // tokenizer's min_num_tokens) is not encoded: build() returns it with a refusal and no token
  // ids, so a hostile row of megabytes costs no tokenization. 0 (the default) checks nothing.
  void set_max_model_len(int max_model_len) { max_model_len_ = max_model_len; }

  // The job's options this builder was made with (a request's own are merged over them).
  const PromptOptions& options() const { return options_; }
  bool uses_chat_template() const { return chat_template_.has_value(); }
  const std::string& column_template_text() const { return column_template_text_; }

 private:
  Conversation conversation_for(const DatasetRow& row) const;
  std::string plain_text(const Conversation& messages) const;
  // Returns why text cannot fit max_model_len_ without encoding it, or "" when it may fit.
  std::string refusal_of(const std::string& text) const;

  PromptOptions options_;
  const Tokenizer* tokenizer_ = nullptr;  // null: messages and text only
  std::string column_template_text_;
  std::optional<ColumnTemplate> column_template_;
  std::optional<ChatTemplate> chat_template_;
  std::string chat_template_source_;
  ReasoningFormat reasoning_format_ = ReasoningFormat::None;
  std::string bos_text_;
  std::string eos_text_;
  int max_model_len_ = 0;
};

}  // namespace sluice
