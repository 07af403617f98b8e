// markupsafe.Markup as Jinja2 3.1 with markupsafe 3.0 uses it when autoescaping is off, as
// transformers renders: `|safe` and `|escape` return Markup, and combining Markup with a plain
// str escapes the str (functionary's tool prompt: `"<tools>"|safe + description`). `~` is plain
// str concatenation and never escapes. Expected texts were rendered by Jinja2 3.1.6 with
// markupsafe 3.0.3 configured as transformers configures it (see template_test_util.h), not
// derived by hand.
//
// Not implemented, as no chat template uses them: Markup's own methods (unescape, striptags)
// and those str lacks here too (format_map, partition, swapcase, ...); markupsafe's refusal of a
// format spec on a Markup field (`('{:>5}'|safe).format('<'|safe)` raises in Python and pads
// here); and a replace `new` or fill character that is not a str, which markupsafe converts
// through escape() and str's methods here refuse.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/unit/template/template_test_util.h"

namespace sluice {
namespace {

using test::TemplateCase;

const TemplateCase kMarkupCases[] = {
    {"functionary: safe text plus a plain string", "{{ (\"<b>\"|safe) + \"<i>&\" }}", nullptr,
     "<b>&lt;i&gt;&amp;"},
    {"plain plus markup escapes the left side",
     "{{ \"<i>&\" + (\"<b>\"|safe) }} {{ ((\"<b>\"|safe) + '\"\\'') + '<' }} {{ (\"<b>\"|safe) + "
     "(\"<i>\"|safe) }}",
     nullptr, "&lt;i&gt;&amp;<b> <b>&#34;&#39;&lt; <b><i>"},
    {"tilde never escapes",
     "{{ (\"<b>\"|safe) ~ \"<i>&\" }} {{ ((\"<b>\"|safe) ~ \"<i>\") + '<' }}", nullptr,
     "<b><i>& <b><i><"},
    {"the sum stays markup",
     "{% set x = '<a>'|safe %}{% set y = x + '<' %}{{ y }} {{ y ~ '<' }} {{ (y ~ '<') + '<' }} {{ "
     "(y + '&') + '>' }}",
     nullptr, "<a>&lt; <a>&lt;< <a>&lt;<< <a>&lt;&amp;&gt;"},
    {"repetition",
     "{{ (\"<b>\"|safe) * 2 + '<' }} {{ 2 * (\"<b>\"|safe) + '<' }} [{{ ('a'|safe) * 0 }}]",
     nullptr, "<b><b>&lt; <b><b>&lt; []"},
    {"percent formatting escapes the arguments",
     "{{ (\"<%s>\"|safe) % '&' }} {{ (\"<%s %s>\"|safe) % ('&', 1) }} {{ (\"%(a)s\"|safe) % {'a': "
     "'<'} }} {{ ('%d'|safe) % 3 }} {{ ('%r'|safe) % \"a'b\" }} {{ ('%s'|safe) % ['<'] }} {{ "
     "('%5s|'|safe) % '<' }} {{ ('%s'|safe) % ('<'|safe) }}",
     nullptr, "<&amp;> <&amp; 1> &lt; 3 &#34;a&#39;b&#34; [&#39;&lt;&#39;]  &lt;| <"},
    {"join and format escape their arguments",
     "{{ ('<br>'|safe).join(['<', ('<'|safe), 1]) }} {{ ('<{}>'|safe).format('&', x='<') }} {{ "
     "('<{x}>'|safe).format(x='<') }} {{ ('{:>5}'|safe).format('<') }} {{ "
     "('{}'|safe).format(('<'|safe)) }} {{ ('{!r}'|safe).format('<') }} {{ "
     "('{0}{0}'|safe).format('&') }}",
     nullptr, "&lt;<br><<br>1 <&amp;> <&lt;>     &lt; < &#39;&lt;&#39; &amp;&amp;"},
    {"escape, e and forceescape",
     "{{ '<&>'|e }} {{ ('<&>'|safe)|e }} {{ ('<&>'|safe)|forceescape }} {{ '<&>'|escape|escape }} "
     "{{ 5|e }} {{ none|e }} {{ ('<&>'|e) + '<' }} {{ '<x>'|safe|escape }}",
     nullptr, "&lt;&amp;&gt; <&> &lt;&amp;&gt; &lt;&amp;&gt; 5 None &lt;&amp;&gt;&lt; <x>"},
    {"string keeps markup, safe converts first",
     "{{ (('<&>'|safe)|string) + '<' }} {{ ('<&>'|string) + '<' }} {{ (5|safe) + '<' }} {{ [1, "
     "'<']|safe }} {{ (none|safe) + '<' }} {{ (undefined_x|safe) + '<' }} {{ (('a'|safe) + "
     "'<')|safe + '>' }}",
     nullptr, "<&>&lt; <&>< 5&lt; [1, '<'] None&lt; &lt; a&lt;&gt;"},
    {"methods that return markup",
     "{{ ('<a>'|safe).upper() + '<' }} {{ ('<a>'|safe).replace('a', '<') }} {{ "
     "('<a>'|safe).strip('<') + '&' }} {{ ('a'|safe).lstrip() + '<' }} {{ ('a'|safe).ljust(3) + "
     "'<' }} {{ ('a b'|safe).title() + '<' }} {{ ('<a'|safe).removeprefix('<') + '<' }} {{ "
     "('a'|safe).zfill(3) + '<' }} {{ ('A'|safe).casefold() + '<' }} {{ ('a'|safe).center(3) + '<' "
     "}}",
     nullptr, "<A>&lt; <&lt;> a>&amp; a&lt; a  &lt; A B&lt; a&lt; 00a&lt; a&lt;  a &lt;"},
    {"split methods return markup lists",
     "{{ ('<a>'|safe).split('a') }} {{ ('a\\nb'|safe).splitlines() }} {{ ('a,b'|safe).rsplit(',') "
     "}} {{ ('a,b'|safe).split(',')[0] + '<' }}",
     nullptr,
     "[Markup('<'), Markup('>')] [Markup('a'), Markup('b')] [Markup('a'), Markup('b')] a&lt;"},
    {"other methods return plain values",
     "{{ ('<a>'|safe).startswith('<') }} {{ ('<a>'|safe).find('a') }} {{ ('<a>'|safe)|length }} {{ "
     "('a'|safe).isdigit() }} {{ ('a-a'|safe).count('a') }}",
     nullptr, "True 1 3 False 2"},
    {"indexing and slicing return markup",
     "{{ ('<a>'|safe)[0] + '&' }} {{ ('<a>'|safe)[1:] + '&' }} {{ ('<a>'|safe)|reverse + '<' }}",
     nullptr, "<&amp; a>&amp; >a<&lt;"},
    {"iteration and first give plain characters",
     "{% for c in ('<a'|safe) %}{{ c + '<' }},{% endfor %} {{ ('<a>'|safe)|first + '<' }} {{ "
     "('<a>'|safe)|list }}",
     nullptr, "<<,a<, << ['<', 'a', '>']"},
    {"filters that keep markup",
     "{{ ('<a>'|safe)|upper + '<' }} {{ ('<a>'|safe)|lower + '<' }} {{ ('<a>'|safe)|trim + '<' }} "
     "{{ ('<a>'|safe)|capitalize + '<' }} {{ ('<a>'|safe)|center(5) + '<' }} {{ "
     "('<a>\\nb'|safe)|indent(2) + '<' }} {{ ('%s<'|safe)|format('&') + '&' }} {{ "
     "('<a>'|safe)|default('x') + '<' }}",
     nullptr, "<A>&lt; <a>&lt; <a>&lt; <a>&lt;  <a> &lt; <a>\n  b&lt; &amp;<&amp; <a>&lt;"},
    {"filters that return plain strings",
     "{{ ('<a>'|safe)|replace('a','b') + '<' }} {{ ('<a>'|safe)|title + '<' }} {{ "
     "('<a>'|safe)|join('x') + '<' }} {{ ['<', 'b']|join('<br>'|safe) + '<' }} {{ "
     "('<a>'|safe)|tojson }}",
     nullptr, "<b>< <A>< <xax>< <<br>b< \"<a>\""},
    {"repr, comparison and tests",
     "{{ [('<a>'|safe)] }} {{ {'k': ('<a>'|safe)} }} {{ ('<a>'|safe) == '<a>' }} {{ ('<a>'|safe) "
     "is string }} {{ ('<a>'|safe) is escaped }} {{ '<a>' is escaped }} {{ '<' in ('<a>'|safe) }}",
     nullptr, "[Markup('<a>')] {'k': Markup('<a>')} True True True False True"},
    {"markup survives variables and namespaces",
     "{% set ns = namespace(p='<'|safe) %}{% set ns.p = ns.p + '&' %}{{ ns.p }} {% set items = "
     "['<'|safe] %}{{ items[0] + '>' }} {{ (['<', 'b']|map('safe')|first) + '<' }}",
     nullptr, "<&amp; <&gt; <&lt;"},
    {"macro and block set results are plain",
     "{% macro m() %}<a>{% endmacro %}{{ m() + '<' }} {% set c %}<a>{% endset %}{{ c + '<' }}",
     nullptr, "<a>< <a><"},
};

TEST(TemplateMarkup, MatchJinja2) {
  test::expect_cases_render(kMarkupCases);
}

TEST(TemplateMarkup, BadOperandsAreErrors) {
  EXPECT_THAT(test::render_error("{{ ('<b>'|safe) + 1 }}"),
              ::testing::HasSubstr("unsupported operand type(s) for +: 'Markup' and 'int'"));
  EXPECT_THAT(test::render_error("{{ 1 + ('<b>'|safe) }}"),
              ::testing::HasSubstr("unsupported operand type(s) for +: 'int' and 'Markup'"));
  EXPECT_THAT(test::render_error("{{ ('a'|safe) + [1] }}"),
              ::testing::HasSubstr("unsupported operand type(s) for +: 'Markup' and 'list'"));
  EXPECT_THAT(test::render_error("{{ [1] + ('a'|safe) }}"),
              ::testing::HasSubstr("can only concatenate list (not \"Markup\") to list"));
  // The fill character is escaped first, so '<' becomes four characters.
  EXPECT_THAT(test::render_error("{{ ('a'|safe).center(3, '<') }}"),
              ::testing::HasSubstr("fill character must be exactly one character long"));
}

TEST(TemplateMarkup, VariablesFromJsonArePlainStrings) {
  EXPECT_EQ(test::render_text("{{ ('<p>'|safe) + text }}|{{ text + ('<p>'|safe) }}",
                              R"({"text": "a<b & 'c'"})"),
            "<p>a&lt;b &amp; &#39;c&#39;|a&lt;b &amp; &#39;c&#39;<p>");
}

}  // namespace
}  // namespace sluice
