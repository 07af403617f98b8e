// Whitespace as transformers renders it: trim_blocks, lstrip_blocks, `-` and `+` on tags,
// comments and raw blocks, newline normalization and keep_trailing_newline=False. Expected
// texts come from Jinja2 (see template_test_util.h).
#include <gtest/gtest.h>

#include "tests/unit/template/template_test_util.h"

namespace sluice {
namespace {

using test::TemplateCase;

const TemplateCase kWhitespaceCases[] = {
    {"trim_blocks drops the newline after a block tag", "{% if true %}\nyes\n{% endif %}\nafter",
     "{}", "yes\nafter"},
    {"trim_blocks drops only one newline", "{% if true %}\n\nx{% endif %}", "{}", "\nx"},
    {"trim_blocks leaves print tags alone", "{{ 'a' }}\nb", "{}", "a\nb"},
    {"trim_blocks applies to comments", "{# note #}\nx", "{}", "x"},
    {"lstrip_blocks removes a block tag's indentation", "  {% if true %}\n  x\n  {% endif %}\nend",
     "{}", "  x\nend"},
    {"lstrip_blocks keeps text before a tag on its line", "a {% if true %}b{% endif %}", "{}",
     "a b"},
    {"lstrip_blocks at the start of the template", "   {% if true %}x{% endif %}", "{}", "x"},
    {"lstrip_blocks applies to comments", "  {# c #}\nx", "{}", "x"},
    {"lstrip_blocks leaves print tags alone", "  {{ 'v' }}", "{}", "  v"},
    {"lstrip_blocks strips tabs", "\t\t{% if true %}x{% endif %}", "{}", "x"},
    {"plus sign turns lstrip off", "  {%+ if true %}x{% endif %}", "{}", "  x"},
    {"plus sign turns trim off", "{% if true +%}\nx{% endif %}", "{}", "\nx"},
    {"minus strips newlines on both sides", "a \n {%- if true -%} \n b {%- endif %}\n", "{}", "ab"},
    {"minus on print tags", "a\n  {{- 'b' -}}  \n c", "{}", "abc"},
    {"indentation after a trimmed newline is stripped",
     "{% if true %}\n    {% if true %}x{% endif %}\n{% endif %}", "{}", "x"},
    {"indentation after a minus-consumed newline is stripped",
     "{% if true -%}\n   {% if true %}y{% endif %}{% endif %}", "{}", "y"},
    {"text before indentation keeps the line", "x\n   {% if true %}y{% endif %}", "{}", "x\ny"},
    {"one trailing newline is dropped", "abc\n", "{}", "abc"},
    {"only one trailing newline is dropped", "abc\n\n", "{}", "abc\n"},
    {"windows newlines become newlines", "a\r\n{% if true %}\r\nb\r\n{% endif %}\r\nc", "{}",
     "a\nb\nc"},
    {"raw keeps tags as text", "{% raw %}{{ not }} {% if %}{% endraw %}", "{}",
     "{{ not }} {% if %}"},
    {"raw with indentation and trim", "  {% raw %}\n{{ x }}\n  {% endraw %}\nz", "{}",
     "\n{{ x }}\nz"},
    {"raw with minus", "a  {%- raw -%}  b  {%- endraw -%}  c", "{}", "abc"},
    {"zephyr layout",
     "{% for m in ['a', 'b'] %}\n{% if m == 'a' %}\n{{ '<' + m + '>\n' }}\n{% endif %}\n{% endfor "
     "%}\n",
     "{}", "<a>\n\n"},
    {"minus strips Unicode spaces", "a 　{{- 'b' }}", "{}", "ab"},
    {"lstrip strips Unicode spaces", " 　{% if true %}x{% endif %}", "{}", "x"},
    {"comment between lines", "a\n  {#- c -#}\n  b", "{}", "ab"},
    {"nested blocks with indentation",
     "{% for i in [1, 2] %}\n  {% if i > 1 %}\n    <{{ i }}>\n  {% endif %}\n{% endfor %}\n", "{}",
     "    <2>\n"},
    {"tag right after text without newline", "x{% if true %}\ny{% endif %}", "{}", "xy"},
    {"set at line start", "    {% set x = 1 %}\n{{ x }}", "{}", "1"},
};

TEST(TemplateWhitespace, MatchesJinja2) {
  test::expect_cases_render(kWhitespaceCases);
}

TEST(TemplateWhitespace, EmptyTemplateRendersNothing) {
  EXPECT_EQ(test::render_text(""), "");
  EXPECT_EQ(test::render_text("\n"), "");
  EXPECT_EQ(test::render_text("{# only a comment #}"), "");
}

TEST(TemplateWhitespace, TextWithoutTagsIsCopiedExactly) {
  const std::string text = "  leading\ttabs\n\nand { braces } and {not a tag} and % signs  ";
  EXPECT_EQ(test::render_text(text), text);
}

}  // namespace
}  // namespace sluice
