// Feeds chat templates to the renderer with random conversations. The input is the template
// source, optionally followed by a NUL byte and bytes that choose the variables: messages with
// any role, string / null / text-part content and tool calls, tools, add_generation_prompt and
// the special tokens. Without a NUL the template renders a fixed four-turn conversation.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "engine/core/error.h"
#include "engine/template/chat_template.h"

using namespace sluice;
using Json = nlohmann::ordered_json;

namespace {

// Keeps one render fast: a template may loop, but not for long.
constexpr int64_t kMaxLoopIterations = 100'000;
constexpr int kMaxMessages = 8;
constexpr size_t kMaxTextBytes = 64;

Json fixed_variables() {
  const Conversation conversation = {{"system", "You are a helpful assistant."},
                                     {"user", "Hello!"},
                                     {"assistant", "Hi there, how can I help?"},
                                     {"user", "Tell me a story."}};
  return chat_variables(conversation, true, "<s>", "</s>");
}

Json random_content(FuzzedDataProvider& provider) {
  switch (provider.ConsumeIntegralInRange(0, 3)) {
    case 0:
      return nullptr;
    case 1:
      return Json::array(
          {{{"type", "text"}, {"text", provider.ConsumeRandomLengthString(kMaxTextBytes)}}});
    default:
      return provider.ConsumeRandomLengthString(kMaxTextBytes);
  }
}

Json random_tool_call(FuzzedDataProvider& provider) {
  Json arguments = Json::object();
  arguments[provider.ConsumeRandomLengthString(kMaxTextBytes)] =
      provider.ConsumeRandomLengthString(kMaxTextBytes);
  return {{"type", "function"},
          {"function",
           {{"name", provider.ConsumeRandomLengthString(kMaxTextBytes)},
            {"arguments", std::move(arguments)}}}};
}

Json random_variables(FuzzedDataProvider& provider) {
  static constexpr const char* kRoles[] = {"system", "user", "assistant", "tool", "ipython"};
  Json messages = Json::array();
  const int num_messages = provider.ConsumeIntegralInRange(0, kMaxMessages);
  for (int i = 0; i < num_messages; ++i) {
    Json message = Json::object();
    message["role"] = provider.ConsumeBool() ? std::string(provider.PickValueInArray(kRoles))
                                             : provider.ConsumeRandomLengthString(kMaxTextBytes);
    message["content"] = random_content(provider);
    if (provider.ConsumeBool()) message["tool_calls"] = Json::array({random_tool_call(provider)});
    messages.push_back(std::move(message));
  }
  Json tools = nullptr;
  if (provider.ConsumeBool()) tools = Json::array({random_tool_call(provider)});
  return {{"messages", std::move(messages)},
          {"tools", std::move(tools)},
          {"documents", nullptr},
          {"add_generation_prompt", provider.ConsumeBool()},
          {"bos_token", provider.ConsumeRandomLengthString(kMaxTextBytes)},
          {"eos_token", provider.ConsumeRandomLengthString(kMaxTextBytes)}};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto* text = reinterpret_cast<const char*>(data);
  const auto* separator = static_cast<const char*>(std::memchr(text, '\0', size));
  const std::string source(text, separator ? separator : text + size);
  Json variables;
  if (separator) {
    const size_t offset = static_cast<size_t>(separator - text) + 1;
    FuzzedDataProvider provider(data + offset, size - offset);
    variables = random_variables(provider);
  } else {
    variables = fixed_variables();
  }
  try {
    const ChatTemplate chat_template = ChatTemplate::compile(source);
    RenderOptions options;
    options.now = std::tm{};
    options.max_loop_iterations = kMaxLoopIterations;
    (void)chat_template.render(variables, options);
  } catch (const Error&) {
  }
  return 0;
}
