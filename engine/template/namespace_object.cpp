#include "engine/template/namespace_object.h"

#include "engine/core/error.h"

namespace sluice::jinja {

std::string NamespaceObject::repr() const {
  return str_cat("<Namespace ", to_str(make_dict(attributes_)), ">");
}

std::optional<Value> NamespaceObject::attribute(std::string_view name) const {
  const Value* found = attributes_.find(name);
  if (found == nullptr) return std::nullopt;
  return *found;
}

void NamespaceObject::set_attribute(std::string_view name, Value value) {
  attributes_.set(std::string(name), std::move(value));
}

}  // namespace sluice::jinja
