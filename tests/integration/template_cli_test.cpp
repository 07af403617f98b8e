// Chat templates through the CLI: a model file or a template file is untrusted input, so a
// hostile template renders or ends with an error naming it (with the line and column), and
// never crashes the process.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>

#include "tests/integration/cli_test_util.h"

namespace sluice::test {
namespace {

using ::testing::HasSubstr;

constexpr const char* kMessages = R"([{"role": "user", "content": "hi"}])";

struct TemplateFiles {
  std::string template_path;
  std::string messages_path;
};

TemplateFiles write_template(const std::string& name, const std::string& source) {
  const std::string dir = make_temp_dir(name);
  write_file(dir + "/t.jinja", source);
  write_file(dir + "/m.json", kMessages);
  return {dir + "/t.jinja", dir + "/m.json"};
}

ProcessResult render_template(const TemplateFiles& files) {
  return run_sluice(
      {"render-template", "--template", files.template_path, "--messages", files.messages_path});
}

// Writes dir/model.gguf: the stories260K GGUF with `replacement` as its built-in chat template,
// padded (inside a comment) to the original's length so that no offset in the file moves.
std::string gguf_with_template(const std::string& dir, const std::string& replacement) {
  std::string bytes = read_file(shared_path("models/stories260K/gguf/stories260K-f32.gguf"));
  const std::string key = "tokenizer.chat_template";
  const size_t key_at = bytes.find(key);
  EXPECT_NE(key_at, std::string::npos);
  const size_t length_at = key_at + key.size() + 4;  // the key, then its value type (u32)
  uint64_t length = 0;
  std::memcpy(&length, bytes.data() + length_at, sizeof(length));
  std::string text = replacement + "{#";
  EXPECT_LE(text.size() + 2, length);
  text.resize(length - 2, ' ');
  text += "#}";
  bytes.replace(length_at + sizeof(length), length, text);
  write_file(dir + "/model.gguf", bytes);
  return dir + "/model.gguf";
}

// Copies the stories260K Hugging Face folder into dir with `chat_template` in its
// tokenizer_config.json.
std::string hf_with_template(const std::string& dir, const std::string& chat_template) {
  const std::string source = shared_path("models/stories260K/hf");
  for (const auto& entry : std::filesystem::directory_iterator(source)) {
    std::filesystem::copy_file(entry.path(), dir + "/" + entry.path().filename().string());
  }
  auto config = nlohmann::json::parse(read_file(dir + "/tokenizer_config.json"));
  config["chat_template"] = chat_template;
  write_file(dir + "/tokenizer_config.json", config.dump());
  return dir;
}

// The issue's reproducer: join over a string iterated a list that was already freed.
TEST(TemplateCli, JoinOverAStringOrAMappingRenders) {
  const auto r = render_template(write_template("join", R"({{ "abc"|join("-") }})"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "a-b-c");
  const auto mapping = render_template(write_template(
      "join-map", "{{ messages[0]|join(',') }}|{{ messages[0].content|map('upper')|join }}"));
  ASSERT_EQ(mapping.exit_code, 0) << mapping.err;
  EXPECT_EQ(mapping.out, "role,content|HI");
}

// The same template as a model's own: generate builds every prompt with it.
TEST(TemplateCli, GenerateRunsAModelWhoseTemplateJoinsAString) {
  const std::string dir = make_temp_dir("gen-join");
  const std::string model =
      hf_with_template(make_temp_dir("gen-join-model"), "{{ messages[0].content|join('') }}");
  write_file(dir + "/input.jsonl", "{\"prompt\": \"Once upon a time\"}\n");
  const auto r = run_sluice({"generate", "--model", model, "--input", dir + "/input.jsonl",
                             "--output", dir + "/out.jsonl", "--max-tokens", "4", "--quiet"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto rows = read_jsonl(dir + "/out.jsonl");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0]["prompt_tokens"], 5);  // the text joined back is the reference prompt
}

TEST(TemplateCli, HugeOutputEndsWithAnErrorNamingTheTemplate) {
  const auto files = write_template("huge", "text\n{{ 'x' * 10**12 }}");
  const auto r = render_template(files);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_THAT(r.err, HasSubstr(files.template_path + ": template error at line 2, column 8: "
                                                     "string repetition result is too large"));
}

TEST(TemplateCli, BrokenBuiltInTemplateNamesTheGguf) {
  const std::string dir = make_temp_dir("gguf-broken");
  const std::string model =
      gguf_with_template(dir, "{% for m in messages %}\n{{ m.content + }}{% endfor %}");
  const std::string expected =
      model +
      ": built-in chat template (tokenizer.chat_template): template syntax error at "
      "line 2, column 16: unexpected end of print statement '}}'";
  write_file(dir + "/m.json", kMessages);
  const auto rendered =
      run_sluice({"render-template", "--model", model, "--messages", dir + "/m.json"});
  EXPECT_EQ(rendered.exit_code, 1);
  EXPECT_THAT(rendered.err, HasSubstr(expected));
  write_file(dir + "/input.jsonl", "{\"prompt\": \"Once upon a time\"}\n");
  const auto generated = run_sluice({"generate", "--model", model, "--input", dir + "/input.jsonl",
                                     "--output", dir + "/out.jsonl"});
  EXPECT_EQ(generated.exit_code, 1);
  EXPECT_THAT(generated.err, HasSubstr(expected));
}

// A built-in template that fails while rendering fails each row, naming the template.
TEST(TemplateCli, HostileBuiltInTemplateFailsItsRowsNamingTheGguf) {
  const std::string dir = make_temp_dir("gguf-hostile");
  const std::string model =
      gguf_with_template(dir, "{% macro f(n) %}{{ f(n) ~ f(n) }}{% endmacro %}{{ f(1) }}");
  write_file(dir + "/input.jsonl", "{\"prompt\": \"Once upon a time\"}\n");
  const auto r = run_sluice({"generate", "--model", model, "--input", dir + "/input.jsonl",
                             "--output", dir + "/out.jsonl", "--on-bad-row", "skip"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_THAT(r.err, HasSubstr(model + ": built-in chat template (tokenizer.chat_template): "
                                       "template error at line 1, column "));
  EXPECT_THAT(r.err, HasSubstr("maximum macro recursion depth exceeded"));
}

// --now freezes strftime_now: gpt-oss's template prints the date, and transformers' render of
// its "single_user" case (clock frozen at 2026-01-15T12:00:00) comes out byte for byte; a time
// that is not one is a usage error naming it.
TEST(TemplateCli, NowFreezesTheClockTemplatesRead) {
  const std::string model_dir = shared_path("chat-templates/openai-gpt-oss-120b");
  const auto cases = nlohmann::json::parse(read_file(model_dir + "/cases.json"));
  nlohmann::json single_user;
  for (const auto& c : cases.at("cases")) {
    if (c.at("name") == "single_user") single_user = c;
  }
  ASSERT_FALSE(single_user.is_null());
  ASSERT_EQ(single_user.at("clock").at("frozen_now"), "2026-01-15T12:00:00");
  const std::string dir = make_temp_dir("now");
  write_file(dir + "/m.json", single_user.at("messages").dump());
  const auto render = [&](const std::string& now) {
    return run_sluice({"render-template", "--template", model_dir + "/template.jinja", "--messages",
                       dir + "/m.json", "--add-generation-prompt", "--bos-token",
                       single_user.at("bos_token").get<std::string>(), "--eos-token",
                       single_user.at("eos_token").get<std::string>(), "--now", now});
  };
  const auto r = render("2026-01-15T12:00:00");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, read_file(model_dir + "/expected/single_user.txt"));
  const auto date_only = render("2026-01-15");
  ASSERT_EQ(date_only.exit_code, 0) << date_only.err;
  EXPECT_EQ(date_only.out, r.out);
  const auto other_day = render("2027-03-04 08:00:00");
  ASSERT_EQ(other_day.exit_code, 0) << other_day.err;
  EXPECT_THAT(other_day.out, HasSubstr("Current date: 2027-03-04\n"));
  for (const std::string bad : {"2026-02-30", "tomorrow", "2026-01-15T12:00:00Z"}) {
    const auto refused = render(bad);
    EXPECT_EQ(refused.exit_code, 2) << bad;
    EXPECT_THAT(refused.err, HasSubstr("--now takes a time as 2026-01-15T12:00:00 or 2026-01-15, "
                                       "not '" +
                                       bad + "'"));
  }
}

}  // namespace
}  // namespace sluice::test
