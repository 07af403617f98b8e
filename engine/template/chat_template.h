// Chat templates: the Jinja2 programs that models ship (tokenizer_config.json's chat_template,
// GGUF's tokenizer.chat_template) to turn a conversation into prompt text. This interpreter
// renders them the way Hugging Face transformers' apply_chat_template does: Jinja2 with
// trim_blocks, lstrip_blocks, keep_trailing_newline=False, the loopcontrols extension,
// raise_exception(message), strftime_now(format) and transformers' tojson. A template is
// compiled once and rendered for every row; compiled templates are immutable, cheap to copy,
// and may render on several threads at once.
#pragma once

#include <cstdint>
#include <ctime>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/core/chat_message.h"
#include "engine/template/template_error.h"

namespace sluice {

namespace jinja {
struct TemplateProgram;
}

struct RenderOptions {
  // The time strftime_now() formats; nullopt uses the current local time.
  std::optional<std::tm> now;
  // A render that runs more loop iterations and macro calls than this fails (TemplateError)
  // instead of hanging.
  int64_t max_loop_iterations = 10'000'000;
  // A render that works through more bytes than this fails (TemplateError) instead of hanging:
  // the sizes of the values each operation reads and makes, and of the output (see
  // render_budget.h). Real templates use 2 to 9 times the size of their output, which is at
  // most kMaxStringBytes (64 MiB).
  uint64_t max_processed_bytes = uint64_t{1} << 30;
};

// Templates longer than this do not compile (real chat templates are a few KiB).
inline constexpr size_t kMaxTemplateBytes = size_t{1} << 20;

class ChatTemplate {
 public:
  // Parses the template; throws Error with the template line and column of a syntax error.
  // origin says where source came from ("t.jinja", "m.gguf: built-in chat template
  // (tokenizer.chat_template)"); every compile and render error then starts with it.
  static ChatTemplate compile(const std::string& source, const std::string& origin = "");

  // Renders with the given variables (a JSON object: messages, add_generation_prompt,
  // bos_token, eos_token, tools, ...). Throws TemplateError whose what() is exactly the
  // message given to raise_exception(...) when the template raises, or a message naming the
  // template (its origin), line and column for runtime errors (unknown filter, calling a
  // non-callable, a limit of RenderOptions or render_budget.h exceeded, ...).
  std::string render(const nlohmann::ordered_json& variables,
                     const RenderOptions& options = {}) const;

 private:
  explicit ChatTemplate(std::shared_ptr<const jinja::TemplateProgram> program);

  std::shared_ptr<const jinja::TemplateProgram> program_;
};

// Returns the variables transformers passes for a conversation: messages (role, content, and a
// turn's reasoning as reasoning_content, reasoning and thinking when it has some),
// tools and documents (None), add_generation_prompt, bos_token and eos_token.
nlohmann::ordered_json chat_variables(const Conversation& messages, bool add_generation_prompt,
                                      const std::string& bos_token, const std::string& eos_token);

// Renders a conversation: template.render(chat_variables(...)).
std::string render_chat(const ChatTemplate& chat_template, const Conversation& messages,
                        bool add_generation_prompt, const std::string& bos_token,
                        const std::string& eos_token);

}  // namespace sluice
