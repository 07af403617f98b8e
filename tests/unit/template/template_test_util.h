// Helpers for the template tests: a case table row and rendering from JSON text. The expected
// outputs in the tables were produced by Jinja2 3.1.6 configured as transformers configures it
// (ImmutableSandboxedEnvironment, trim_blocks, lstrip_blocks, loopcontrols, raise_exception,
// transformers' tojson, strftime_now on 2024-07-26 12:00:00).
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <ctime>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/template/chat_template.h"

namespace sluice::test {

struct TemplateCase {
  const char* name;
  const char* source;
  const char* variables_json;
  const char* expected;
};

// The frozen clock the reference outputs were rendered with: Friday 2024-07-26 12:00:00.
inline std::tm reference_time() {
  std::tm time{};
  time.tm_year = 2024 - 1900;
  time.tm_mon = 6;
  time.tm_mday = 26;
  time.tm_hour = 12;
  time.tm_wday = 5;
  time.tm_yday = 207;
  return time;
}

// Compiles source and renders it with the variables in variables_json at the reference time.
inline std::string render_text(const std::string& source,
                               const std::string& variables_json = "{}") {
  RenderOptions options;
  options.now = reference_time();
  return ChatTemplate::compile(source).render(nlohmann::ordered_json::parse(variables_json),
                                              options);
}

// Returns the message of the TemplateError that rendering throws, or "" when it renders.
inline std::string render_error(const std::string& source,
                                const std::string& variables_json = "{}") {
  try {
    render_text(source, variables_json);
  } catch (const TemplateError& error) {
    return error.what();
  }
  return "";
}

// Returns the message of the Error that compiling throws, or "" when it compiles.
inline std::string compile_error(const std::string& source) {
  try {
    ChatTemplate::compile(source);
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

// Renders every case (with shared_variables where a case has none) and compares the text.
template <size_t N>
void expect_cases_render(const TemplateCase (&cases)[N], const char* shared_variables = "{}") {
  for (const TemplateCase& test_case : cases) {
    SCOPED_TRACE(std::string(test_case.name) + ": " + test_case.source);
    const char* variables = test_case.variables_json ? test_case.variables_json : shared_variables;
    try {
      EXPECT_EQ(render_text(test_case.source, variables), test_case.expected);
    } catch (const std::exception& error) {
      ADD_FAILURE() << "threw: " << error.what();
    }
  }
}

}  // namespace sluice::test
