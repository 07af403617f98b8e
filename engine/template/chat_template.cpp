#include "engine/template/chat_template.h"

#include <new>
#include <stdexcept>

#include "engine/template/render_fault.h"
#include "engine/template/render_state.h"
#include "engine/template/source_location.h"
#include "engine/template/statement_renderer.h"
#include "engine/template/template_json.h"
#include "engine/template/template_lexer.h"
#include "engine/template/template_parser.h"

namespace sluice {

ChatTemplate::ChatTemplate(std::shared_ptr<const jinja::TemplateProgram> program)
    : program_(std::move(program)) {}

namespace {

// Returns "origin: " for the start of an error message, or "" for an unnamed template.
std::string origin_prefix(const std::string& origin) {
  return origin.empty() ? std::string() : origin + ": ";
}

}  // namespace

ChatTemplate ChatTemplate::compile(const std::string& source, const std::string& origin) {
  if (source.size() > kMaxTemplateBytes) {
    fail(origin_prefix(origin), "the template is too large (", source.size(),
         " bytes; the limit is ", kMaxTemplateBytes, ")");
  }
  std::shared_ptr<jinja::TemplateProgram> program;
  try {
    program = std::make_shared<jinja::TemplateProgram>(
        jinja::parse_template(jinja::normalize_template_source(source)));
  } catch (const Error& error) {
    if (origin.empty()) throw;
    fail(origin_prefix(origin), error.what());
  }
  program->origin = origin;
  return ChatTemplate(std::move(program));
}

std::string ChatTemplate::render(const nlohmann::ordered_json& variables,
                                 const RenderOptions& options) const {
  if (!variables.is_object()) throw TemplateError("template variables must be a JSON object");
  jinja::Value globals;
  try {
    globals = jinja::value_from_json(variables);
  } catch (const jinja::RenderFault& fault) {
    throw TemplateError(str_cat("template variables: ", fault.what()));
  }
  jinja::RenderState state(&globals.as_dict(), jinja::RenderBudget(options.max_loop_iterations,
                                                                   options.max_processed_bytes));
  std::string out;
  state.out = &out;
  state.fixed_now = options.now;
  const auto render_error = [&](std::string_view message) {
    return TemplateError(str_cat(origin_prefix(program_->origin), "template error at ",
                                 jinja::describe_offset(program_->source, state.offset), ": ",
                                 message));
  };
  try {
    jinja::render_body(state, program_->body);
  } catch (const jinja::RenderFault& fault) {
    throw render_error(fault.what());
  } catch (const std::bad_alloc&) {
    throw render_error("out of memory");  // the limits should make this unreachable
  } catch (const std::length_error&) {
    throw render_error("a value is too large");
  }
  return out;
}

nlohmann::ordered_json chat_variables(const Conversation& messages, bool add_generation_prompt,
                                      const std::string& bos_token, const std::string& eos_token) {
  nlohmann::ordered_json message_list = nlohmann::ordered_json::array();
  for (const ChatMessage& message : messages) {
    nlohmann::ordered_json m = {{"role", message.role}, {"content", message.content}};
    // Templates read a past turn's reasoning under the name their family uses: reasoning_content
    // (Qwen3, DeepSeek), thinking (gpt-oss), reasoning or reasoning_content (Gemma 4).
    if (!message.reasoning.empty()) {
      m["reasoning_content"] = message.reasoning;
      m["reasoning"] = message.reasoning;
      m["thinking"] = message.reasoning;
    }
    message_list.push_back(std::move(m));
  }
  // transformers always passes tools and documents, as None when there are none.
  return {{"messages", std::move(message_list)},
          {"tools", nullptr},
          {"documents", nullptr},
          {"add_generation_prompt", add_generation_prompt},
          {"bos_token", bos_token},
          {"eos_token", eos_token}};
}

std::string render_chat(const ChatTemplate& chat_template, const Conversation& messages,
                        bool add_generation_prompt, const std::string& bos_token,
                        const std::string& eos_token) {
  return chat_template.render(
      chat_variables(messages, add_generation_prompt, bos_token, eos_token));
}

}  // namespace sluice
