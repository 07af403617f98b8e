// Variable scopes while rendering, with Jinja2's rules: a for-loop iteration, a macro call and a
// with block get their own frame (a `set` there is gone when it ends, and each iteration starts
// afresh), `if` does not. A macro's frame is isolated: its body sees its parameters and the
// template's top level, not the caller's loop variables. Below every frame lie the render
// variables; the interpreter's globals come last (the caller looks them up).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/template/template_value.h"

namespace sluice::jinja {

class ScopeStack {
 public:
  // variables: the render variables (must outlive the stack). Starts with the top-level frame.
  explicit ScopeStack(const Dict* variables);

  // Returns the binding of name visible from the innermost frame, or nullptr.
  const Value* find(std::string_view name) const;
  // Binds name in the innermost frame.
  void set(std::string_view name, Value value);
  // Opens a frame; an isolated frame hides the frames between it and the top level.
  void push(bool is_isolated = false);
  // Closes the innermost frame. Precondition: a frame other than the top level is open.
  void pop();
  // Forgets the innermost frame's bindings (a new loop iteration).
  void clear_innermost();

 private:
  struct Frame {
    std::vector<std::pair<std::string, Value>> bindings;
    bool is_isolated = false;
  };

  // Frames [0, num_frames_) are open; later ones are kept to reuse their storage.
  std::vector<Frame> frames_;
  size_t num_frames_ = 1;
  const Dict* variables_;
};

}  // namespace sluice::jinja
