#include "engine/input/field_value.h"

namespace sluice {

bool is_empty_field_value(const nlohmann::ordered_json& value) {
  if (value.is_null()) return true;
  if (value.is_string()) {
    return value.get_ref<const std::string&>().find_first_not_of(" \t\r\n") == std::string::npos;
  }
  if (value.is_array() || value.is_object()) return value.empty();
  return false;
}

std::string field_value_text(const nlohmann::ordered_json& value) {
  if (value.is_string()) return value.get<std::string>();
  // Readers have validated UTF-8, but a value built elsewhere may not be; never throw here.
  return value.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace sluice
