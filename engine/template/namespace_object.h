// Jinja2's namespace(): the one mutable value in a template, so that a loop can carry state
// out of its body (`{% set ns.found = true %}`), which plain `set` cannot do across scopes.
#pragma once

#include <string>
#include <string_view>

#include "engine/template/template_value.h"

namespace sluice::jinja {

class NamespaceObject final : public Object {
 public:
  explicit NamespaceObject(Dict attributes) : attributes_(std::move(attributes)) {}

  std::string type_name() const override { return "Namespace"; }
  std::string repr() const override;
  std::optional<Value> attribute(std::string_view name) const override;
  // Sets attribute name (what `{% set ns.name = value %}` does).
  void set_attribute(std::string_view name, Value value);
  // Drops every attribute; the end of a render does this to break reference cycles
  // (`{% set ns.self = ns %}`) and long chains of namespaces.
  void clear_attributes() { attributes_.entries.clear(); }

 private:
  Dict attributes_;
};

}  // namespace sluice::jinja
