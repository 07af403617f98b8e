// The dict and list methods templates call: dict.get / items / keys / values / copy and
// list.index / count / copy. Mutating methods (append, pop, update, ...) are refused, as in
// transformers' immutable sandbox, with the sandbox's message.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "engine/template/call_args.h"
#include "engine/template/template_value.h"

namespace sluice::jinja {

// Returns true when name is a dict method templates may call.
bool is_dict_method(std::string_view name);
// Returns true when name is a list method templates may call.
bool is_list_method(std::string_view name);

// Returns the sandbox's refusal ("access to attribute 'append' of 'list' object is unsafe.")
// when name is a mutating method of value's type, else nullopt.
std::optional<std::string> unsafe_method_message(const Value& value, std::string_view name);

// Calls self.name(args) on a dict. Precondition: self is a dict and is_dict_method(name).
Value call_dict_method(const Value& self, std::string_view name, const CallArgs& args);
// Calls self.name(args) on a list. Precondition: self is a list and is_list_method(name).
Value call_list_method(const Value& self, std::string_view name, const CallArgs& args);

}  // namespace sluice::jinja
