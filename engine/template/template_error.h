// Errors of chat-template rendering. A template that calls raise_exception(message) produces a
// TemplateError whose what() is exactly that message (what transformers shows the user); other
// runtime errors (an unknown filter, calling something that is not callable, an undefined
// value used where Jinja2 fails) carry a message naming the template line and column.
// Syntax errors found while compiling are plain sluice::Error with the line and column.
#pragma once

#include "engine/core/error.h"

namespace sluice {

class TemplateError : public Error {
 public:
  using Error::Error;
};

}  // namespace sluice
