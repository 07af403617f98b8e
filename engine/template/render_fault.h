// A runtime error raised inside the interpreter (a type error, an undefined value used, a bad
// filter argument). Value operations throw it without knowing where they are in the template;
// the renderer adds the template line and column and rethrows it as sluice::TemplateError.
#pragma once

#include <stdexcept>
#include <utility>

#include "engine/core/error.h"

namespace sluice::jinja {

class RenderFault : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws RenderFault with the concatenated message.
template <typename... Args>
[[noreturn]] void render_fail(Args&&... args) {
  throw RenderFault(str_cat(std::forward<Args>(args)...));
}

}  // namespace sluice::jinja
