#include "engine/grammar/json_schema_validator_uri.h"

#include <optional>

namespace sluice {
namespace {

struct UriParts {
  std::optional<std::string> scheme, authority, query, fragment;
  std::string path;
};

UriParts parse_uri(std::string_view text) {
  UriParts parts;
  size_t scheme_end = text.find_first_of(":/?#");
  if (scheme_end != std::string_view::npos && scheme_end > 0 && text[scheme_end] == ':') {
    parts.scheme = std::string(text.substr(0, scheme_end));
    text = text.substr(scheme_end + 1);
  }
  if (size_t hash = text.find('#'); hash != std::string_view::npos) {
    parts.fragment = std::string(text.substr(hash + 1));
    text = text.substr(0, hash);
  }
  if (size_t question = text.find('?'); question != std::string_view::npos) {
    parts.query = std::string(text.substr(question + 1));
    text = text.substr(0, question);
  }
  if (text.starts_with("//")) {
    text = text.substr(2);
    size_t slash = text.find('/');
    parts.authority = std::string(text.substr(0, slash));
    text = slash == std::string_view::npos ? std::string_view{} : text.substr(slash);
  }
  parts.path = std::string(text);
  return parts;
}

// RFC 3986 5.2.4.
std::string remove_dot_segments(std::string_view input) {
  std::string output;
  while (!input.empty()) {
    if (input.starts_with("../")) {
      input.remove_prefix(3);
    } else if (input.starts_with("./")) {
      input.remove_prefix(2);
    } else if (input.starts_with("/./")) {
      input.remove_prefix(2);
    } else if (input == "/.") {
      input = "/";
    } else if (input.starts_with("/../") || input == "/..") {
      input = input.size() == 3 ? std::string_view("/") : input.substr(3);
      size_t last = output.rfind('/');
      output.resize(last == std::string::npos ? 0 : last);
    } else if (input == "." || input == "..") {
      input = {};
    } else {
      size_t next = input.find('/', input[0] == '/' ? 1 : 0);
      output += input.substr(0, next);
      input = next == std::string_view::npos ? std::string_view{} : input.substr(next);
    }
  }
  return output;
}

std::string merge_paths(const UriParts& base, const std::string& reference_path) {
  if (base.authority && base.path.empty()) return "/" + reference_path;
  size_t last = base.path.rfind('/');
  if (last == std::string::npos) return reference_path;
  return base.path.substr(0, last + 1) + reference_path;
}

std::string compose(const UriParts& parts) {
  std::string out;
  if (parts.scheme) out += *parts.scheme + ":";
  if (parts.authority) out += "//" + *parts.authority;
  out += parts.path;
  if (parts.query) out += "?" + *parts.query;
  if (parts.fragment) out += "#" + *parts.fragment;
  return out;
}

}  // namespace

std::string resolve_uri_reference(std::string_view base_text, std::string_view reference_text) {
  UriParts base = parse_uri(base_text), reference = parse_uri(reference_text), target;
  if (reference.scheme) {
    target = reference;
    target.path = remove_dot_segments(reference.path);
  } else {
    if (reference.authority) {
      target.authority = reference.authority;
      target.path = remove_dot_segments(reference.path);
      target.query = reference.query;
    } else {
      if (reference.path.empty()) {
        target.path = base.path;
        target.query = reference.query ? reference.query : base.query;
      } else {
        target.path = reference.path[0] == '/'
                          ? remove_dot_segments(reference.path)
                          : remove_dot_segments(merge_paths(base, reference.path));
        target.query = reference.query;
      }
      target.authority = base.authority;
    }
    target.scheme = base.scheme;
  }
  target.fragment = reference.fragment;
  return compose(target);
}

std::pair<std::string, std::string> split_uri_fragment(std::string_view uri) {
  size_t hash = uri.find('#');
  if (hash == std::string_view::npos) return {std::string(uri), ""};
  return {std::string(uri.substr(0, hash)), std::string(uri.substr(hash + 1))};
}

std::string escape_json_pointer_token(std::string_view token) {
  std::string out;
  for (char c : token) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

std::string percent_decode(std::string_view text) {
  std::string out;
  auto hex_value = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() + 0 && hex_value(text[i + 1]) >= 0 &&
        hex_value(text[i + 2]) >= 0) {
      out += static_cast<char>(hex_value(text[i + 1]) * 16 + hex_value(text[i + 2]));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

}  // namespace sluice
