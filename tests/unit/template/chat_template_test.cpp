// The public entry points: render_chat over a Conversation gives what the shared fixtures
// expect, a compiled template renders many times and on many threads with the same result, and
// copies share one compiled program.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "engine/template/chat_template.h"
#include "tests/support/test_paths.h"

namespace sluice {
namespace {

std::string fixture(const std::string& relative) {
  return test::read_file(test::shared_path("chat-templates/" + relative));
}

const Conversation kMultiTurn = {
    {"user", "Hi there!"},
    {"assistant", "Hello! How can I help you today?"},
    {"user", "Tell me a joke."},
};

TEST(ChatTemplate, RenderChatMatchesTransformers) {
  const ChatTemplate llama =
      ChatTemplate::compile(fixture("meta-llama-Llama-3.1-8B-Instruct/template.jinja"));
  EXPECT_EQ(render_chat(llama, kMultiTurn, true, "<|begin_of_text|>", "<|eot_id|>"),
            fixture("meta-llama-Llama-3.1-8B-Instruct/expected/multi_turn.txt"));
  EXPECT_EQ(render_chat(llama, kMultiTurn, false, "<|begin_of_text|>", "<|eot_id|>"),
            fixture("meta-llama-Llama-3.1-8B-Instruct/expected/multi_turn_no_gen.txt"));
  const ChatTemplate zephyr =
      ChatTemplate::compile(fixture("HuggingFaceH4-zephyr-7b-beta/template.jinja"));
  EXPECT_EQ(render_chat(zephyr, kMultiTurn, true, "<s>", "</s>"),
            fixture("HuggingFaceH4-zephyr-7b-beta/expected/multi_turn.txt"));
}

TEST(ChatTemplate, ChatVariablesAreWhatTransformersPasses) {
  const nlohmann::ordered_json variables = chat_variables({{"user", "Hi"}}, true, "<s>", "</s>");
  EXPECT_EQ(variables.dump(),
            R"({"messages":[{"role":"user","content":"Hi"}],"tools":null,"documents":null,)"
            R"("add_generation_prompt":true,"bos_token":"<s>","eos_token":"</s>"})");
}

TEST(ChatTemplate, RaisesThroughRenderChat) {
  const ChatTemplate mistral =
      ChatTemplate::compile(fixture("mistralai-Mistral-7B-Instruct-v0.2/template.jinja"));
  try {
    render_chat(mistral, {{"user", "a"}, {"user", "b"}}, true, "<s>", "</s>");
    ADD_FAILURE() << "rendered a conversation the template rejects";
  } catch (const TemplateError& error) {
    EXPECT_STREQ(error.what(),
                 "Conversation roles must alternate user/assistant/user/assistant/...");
  }
}

TEST(ChatTemplate, RendersTheSameEveryTimeAndOnEveryThread) {
  const ChatTemplate qwen =
      ChatTemplate::compile(fixture("Qwen-Qwen2.5-7B-Instruct/template.jinja"));
  const ChatTemplate copy = qwen;  // shares the compiled program
  const std::string expected = render_chat(qwen, kMultiTurn, true, "", "<|im_end|>");
  EXPECT_EQ(expected, fixture("Qwen-Qwen2.5-7B-Instruct/expected/multi_turn.txt"));
  std::vector<std::string> results(8);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < results.size(); ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i)
        results[t] = render_chat(copy, kMultiTurn, true, "", "<|im_end|>");
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const std::string& result : results) EXPECT_EQ(result, expected);
}

// A template from a model file names that file in its errors, with the line and column.
TEST(ChatTemplate, ErrorsNameWhereTheTemplateCameFrom) {
  const std::string origin = "/models/m.gguf: built-in chat template (tokenizer.chat_template)";
  try {
    ChatTemplate::compile("{% for m in messages %}\n{{ m.content + }}{% endfor %}", origin);
    ADD_FAILURE() << "compiled a broken template";
  } catch (const Error& error) {
    EXPECT_STREQ(error.what(), (origin + ": template syntax error at line 2, column 16: "
                                         "unexpected end of print statement '}}'")
                                   .c_str());
  }
  const ChatTemplate adding = ChatTemplate::compile("a\n{{ 1 + 'x' }}", "t.jinja");
  try {
    adding.render(nlohmann::ordered_json::object());
    ADD_FAILURE() << "rendered 1 + 'x'";
  } catch (const TemplateError& error) {
    EXPECT_STREQ(error.what(),
                 "t.jinja: template error at line 2, column 6: unsupported operand "
                 "type(s) for +: 'int' and 'str'");
  }
  // raise_exception's message stays exactly what the template gave.
  try {
    ChatTemplate::compile("{{ raise_exception('no') }}", "t.jinja")
        .render(nlohmann::ordered_json::object());
    ADD_FAILURE() << "did not raise";
  } catch (const TemplateError& error) {
    EXPECT_STREQ(error.what(), "no");
  }
}

TEST(ChatTemplate, NamespaceStateDoesNotLeakBetweenRenders) {
  const ChatTemplate counter = ChatTemplate::compile(
      "{% set ns = namespace(n=0) %}{% for m in messages %}{% set ns.n = ns.n + 1 %}{% endfor %}"
      "{{ ns.n }}");
  EXPECT_EQ(render_chat(counter, kMultiTurn, false, "", ""), "3");
  EXPECT_EQ(render_chat(counter, kMultiTurn, false, "", ""), "3");
}

}  // namespace
}  // namespace sluice
