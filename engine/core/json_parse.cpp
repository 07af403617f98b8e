#include "engine/core/json_parse.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "engine/core/error.h"
#include "engine/core/json_depth.h"

namespace sluice {

namespace {

// nlohmann's out_of_range id for a number that does not fit a double.
constexpr int kNumberOverflowId = 406;

// A SAX handler that builds nothing and keeps the parser's first complaint, with its position.
// It only runs on text that already failed to parse, to find out where and why.
template <typename BasicJson>
class JsonFailureLocator final : public nlohmann::json_sax<BasicJson> {
 public:
  using Base = nlohmann::json_sax<BasicJson>;

  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(typename Base::number_integer_t) override { return true; }
  bool number_unsigned(typename Base::number_unsigned_t) override { return true; }
  bool number_float(typename Base::number_float_t, const typename Base::string_t&) override {
    return true;
  }
  bool string(typename Base::string_t&) override { return true; }
  bool binary(typename Base::binary_t&) override { return true; }
  bool start_object(size_t) override { return true; }
  bool key(typename Base::string_t&) override { return true; }
  bool end_object() override { return true; }
  bool start_array(size_t) override { return true; }
  bool end_array() override { return true; }

  // position counts the bytes read: past the last one for a syntax error, and just past the
  // offending number (last_token) for an overflow.
  bool parse_error(size_t position, const std::string& last_token,
                   const nlohmann::detail::exception& error) override {
    if (error.id == kNumberOverflowId) {
      failure_.offset = position >= last_token.size() ? position - last_token.size() : 0;
      failure_.description = str_cat("number ", last_token, " is out of range for a double");
      return false;
    }
    failure_.offset = position > 0 ? position - 1 : 0;
    // The message repeats the position nlohmann counted ("... column 7: "); keep what follows.
    const std::string what = error.what();
    const size_t column = what.find(", column ");
    const size_t colon = column == std::string::npos ? what.find("] ") : what.find(": ", column);
    failure_.description = colon == std::string::npos ? what : what.substr(colon + 2);
    return false;
  }

  const JsonParseFailure& failure() const { return failure_; }

 private:
  JsonParseFailure failure_{0, "not valid JSON"};
};

}  // namespace

template <typename BasicJson>
std::optional<JsonParseFailure> try_parse_json(std::string_view text, BasicJson& value) {
  if (const auto past = find_json_nesting_past(text)) {
    return JsonParseFailure{
        *past, str_cat("arrays and objects nested deeper than ", kMaxJsonDepth, " levels")};
  }
  value = BasicJson::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!value.is_discarded()) return std::nullopt;
  JsonFailureLocator<BasicJson> locator;
  BasicJson::sax_parse(text, &locator);
  JsonParseFailure failure = locator.failure();
  failure.offset = std::min(failure.offset, text.size());
  return failure;
}

std::string describe_json_failure(std::string_view text, const JsonParseFailure& failure) {
  return str_cat("not valid JSON at ", text_position(text, failure.offset), ": ",
                 failure.description);
}

template <typename BasicJson>
BasicJson parse_json_text(std::string_view text, const std::string& name) {
  BasicJson value;
  if (const auto failure = try_parse_json(text, value)) {
    fail(name, ": ", describe_json_failure(text, *failure));
  }
  return value;
}

template <typename BasicJson>
const char* json_type_name(const BasicJson& value) {
  if (value.is_object()) return "an object";
  if (value.is_array()) return "an array";
  if (value.is_string()) return "a string";
  if (value.is_boolean()) return "a boolean";
  if (value.is_null()) return "null";
  return "a number";
}

template std::optional<JsonParseFailure> try_parse_json(std::string_view, nlohmann::json&);
template std::optional<JsonParseFailure> try_parse_json(std::string_view, nlohmann::ordered_json&);
template nlohmann::json parse_json_text(std::string_view, const std::string&);
template nlohmann::ordered_json parse_json_text(std::string_view, const std::string&);
template const char* json_type_name(const nlohmann::json&);
template const char* json_type_name(const nlohmann::ordered_json&);

}  // namespace sluice
