#include "engine/grammar/json_schema_formats.h"

#include <array>
#include <cstdint>

namespace sluice {
namespace {

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_alpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
bool is_hex(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// Reads exactly num_digits decimal digits at text[pos]; returns their value or -1.
int read_digits(std::string_view text, size_t pos, size_t num_digits) {
  if (pos + num_digits > text.size()) return -1;
  int value = 0;
  for (size_t i = 0; i < num_digits; ++i) {
    if (!is_digit(text[pos + i])) return -1;
    value = value * 10 + (text[pos + i] - '0');
  }
  return value;
}

int days_in_month(int year, int month) {
  static constexpr std::array<int, 12> kDays = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  bool is_leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  return month == 2 && is_leap ? 29 : kDays[static_cast<size_t>(month - 1)];
}

// RFC 3339 full-date: YYYY-MM-DD with a day that exists.
bool is_date(std::string_view text) {
  if (text.size() != 10 || text[4] != '-' || text[7] != '-') return false;
  int year = read_digits(text, 0, 4), month = read_digits(text, 5, 2),
      day = read_digits(text, 8, 2);
  if (year < 0 || month < 1 || month > 12 || day < 1) return false;
  return day <= days_in_month(year, month);
}

// RFC 3339 full-time: HH:MM:SS[.frac](Z|+HH:MM|-HH:MM); a leap second (:60) only where the time
// is 23:59 in UTC.
bool is_time(std::string_view text) {
  if (text.size() < 9 || text[2] != ':' || text[5] != ':') return false;
  int hour = read_digits(text, 0, 2), minute = read_digits(text, 3, 2),
      second = read_digits(text, 6, 2);
  if (hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 60) return false;
  size_t pos = 8;
  if (text[pos] == '.') {
    size_t start = ++pos;
    while (pos < text.size() && is_digit(text[pos])) ++pos;
    if (pos == start) return false;
  }
  if (pos >= text.size()) return false;
  int offset_minutes = 0;
  if (text[pos] == 'Z' || text[pos] == 'z') {
    if (pos + 1 != text.size()) return false;
  } else if (text[pos] == '+' || text[pos] == '-') {
    if (pos + 6 != text.size() || text[pos + 3] != ':') return false;
    int offset_hour = read_digits(text, pos + 1, 2), offset_minute = read_digits(text, pos + 4, 2);
    if (offset_hour < 0 || offset_hour > 23 || offset_minute < 0 || offset_minute > 59)
      return false;
    offset_minutes = (offset_hour * 60 + offset_minute) * (text[pos] == '+' ? 1 : -1);
  } else {
    return false;
  }
  if (second == 60) {
    int utc_minutes = ((hour * 60 + minute - offset_minutes) % 1440 + 1440) % 1440;
    if (utc_minutes != 23 * 60 + 59) return false;
  }
  return true;
}

bool is_date_time(std::string_view text) {
  if (text.size() < 11 || (text[10] != 'T' && text[10] != 't')) return false;
  return is_date(text.substr(0, 10)) && is_time(text.substr(11));
}

// RFC 3339 appendix A: P then a week, or date elements (Y M D, each present one adjacent to the
// next: Y[M[D]], M[D], D) and/or T with time elements (H[M[S]], M[S], S).
bool is_duration(std::string_view text) {
  if (text.size() < 2 || text[0] != 'P') return false;
  // The units in order; a run of present units must be contiguous in this order.
  std::string_view units = "YMDTHMS";
  size_t pos = 1;
  size_t unit_idx = 0;    // the next unit allowed
  int last_present = -1;  // the index in units of the last element
  bool in_time = false, has_time_element = false, has_week = false, has_any = false;
  while (pos < text.size()) {
    if (text[pos] == 'T') {
      if (in_time) return false;
      in_time = true;
      unit_idx = 4;
      last_present = -1;
      ++pos;
      continue;
    }
    size_t start = pos;
    while (pos < text.size() && is_digit(text[pos])) ++pos;
    if (pos == start || pos >= text.size()) return false;
    char unit = text[pos++];
    if (unit == 'W') {
      if (has_any || in_time) return false;
      has_week = true;
      has_any = true;
      if (pos != text.size()) return false;
      continue;
    }
    size_t found = units.find(unit, in_time ? 4 : 0);
    if (found == std::string_view::npos || found == 3 || found < unit_idx) return false;
    if (!in_time && found > 3) return false;
    if (last_present >= 0 && found != static_cast<size_t>(last_present) + 1) return false;
    last_present = static_cast<int>(found);
    unit_idx = found + 1;
    has_any = true;
    if (in_time) has_time_element = true;
  }
  if (in_time && !has_time_element) return false;
  return has_any || has_week;
}

// One or more labels of letters, digits and inner hyphens, each 1-63 bytes, 253 in all.
bool is_hostname(std::string_view text) {
  if (text.empty() || text.size() > 253) return false;
  size_t label_start = 0;
  for (size_t pos = 0; pos <= text.size(); ++pos) {
    if (pos < text.size() && text[pos] != '.') {
      char c = text[pos];
      if (!is_alpha(c) && !is_digit(c) && c != '-') return false;
      continue;
    }
    size_t length = pos - label_start;
    if (length == 0 || length > 63) return false;
    if (text[label_start] == '-' || text[pos - 1] == '-') return false;
    label_start = pos + 1;
  }
  return true;
}

bool is_ipv4(std::string_view text) {
  size_t pos = 0;
  for (int part = 0; part < 4; ++part) {
    if (part > 0) {
      if (pos >= text.size() || text[pos] != '.') return false;
      ++pos;
    }
    size_t start = pos;
    int value = 0;
    while (pos < text.size() && is_digit(text[pos]) && pos - start < 3) {
      value = value * 10 + (text[pos] - '0');
      ++pos;
    }
    size_t length = pos - start;
    if (length == 0 || value > 255 || (length > 1 && text[start] == '0')) return false;
  }
  return pos == text.size();
}

// RFC 4291 section 2.2: eight groups of 1-4 hex digits, one "::" for a run of zero groups, the
// last two groups may be written as an IPv4 address.
bool is_ipv6(std::string_view text) {
  if (text.empty()) return false;
  int num_groups = 0;
  bool has_compression = false;
  size_t pos = 0;
  if (text.starts_with("::")) {
    has_compression = true;
    pos = 2;
    if (pos == text.size()) return true;
  } else if (text[0] == ':') {
    return false;
  }
  while (pos < text.size()) {
    size_t start = pos;
    while (pos < text.size() && is_hex(text[pos]) && pos - start < 5) ++pos;
    if (pos < text.size() && text[pos] == '.') {  // the IPv4 tail
      if (!is_ipv4(text.substr(start))) return false;
      num_groups += 2;
      pos = text.size();
      break;
    }
    size_t length = pos - start;
    if (length == 0 || length > 4) return false;
    ++num_groups;
    if (pos == text.size()) break;
    if (text[pos] != ':') return false;
    ++pos;
    if (pos < text.size() && text[pos] == ':') {
      if (has_compression) return false;
      has_compression = true;
      ++pos;
      if (pos == text.size()) break;
    } else if (pos == text.size()) {
      return false;  // a trailing single ':'
    }
  }
  return has_compression ? num_groups <= 7 : num_groups == 8;
}

bool is_uuid(std::string_view text) {
  if (text.size() != 36) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    bool is_dash_position = i == 8 || i == 13 || i == 18 || i == 23;
    if (is_dash_position ? text[i] != '-' : !is_hex(text[i])) return false;
  }
  return true;
}

// RFC 5322 atext.
bool is_atext(char c) {
  return is_alpha(c) || is_digit(c) ||
         std::string_view("!#$%&'*+-/=?^_`{|}~").find(c) != std::string_view::npos;
}

bool is_email(std::string_view text) {
  size_t at = text.rfind('@');
  if (at == std::string_view::npos || at == 0 || at + 1 == text.size()) return false;
  std::string_view local = text.substr(0, at), domain = text.substr(at + 1);
  if (local.front() == '"') {
    if (local.size() < 2 || local.back() != '"') return false;
    for (size_t i = 1; i + 1 < local.size(); ++i) {
      auto c = static_cast<unsigned char>(local[i]);
      if (c == '\\') {
        if (++i + 1 >= local.size()) return false;
      } else if (c == '"' || c < 0x20 || c == 0x7F) {
        return false;
      }
    }
  } else {
    if (local.front() == '.' || local.back() == '.' || local.find("..") != std::string_view::npos) {
      return false;
    }
    for (char c : local) {
      if (c != '.' && !is_atext(c)) return false;
    }
  }
  if (domain.front() == '[') {
    if (domain.back() != ']') return false;
    std::string_view literal = domain.substr(1, domain.size() - 2);
    if (literal.starts_with("IPv6:")) return is_ipv6(literal.substr(5));
    return is_ipv4(literal);
  }
  return is_hostname(domain);
}

bool is_unreserved(char c) {
  return is_alpha(c) || is_digit(c) || c == '-' || c == '.' || c == '_' || c == '~';
}
bool is_sub_delim(char c) {
  return std::string_view("!$&'()*+,;=").find(c) != std::string_view::npos;
}

// Whether text is made of unreserved characters, sub-delims, percent-encodings and extra.
bool is_uri_part(std::string_view text, std::string_view extra) {
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '%') {
      if (i + 2 >= text.size() + 0 || !is_hex(text[i + 1]) || !is_hex(text[i + 2])) return false;
      i += 2;
    } else if (!is_unreserved(c) && !is_sub_delim(c) && extra.find(c) == std::string_view::npos) {
      return false;
    }
  }
  return true;
}

// RFC 3986 authority: [userinfo@]host[:port], host a reg-name or an IP literal.
bool is_uri_authority(std::string_view authority) {
  size_t at = authority.rfind('@');
  if (at != std::string_view::npos) {
    if (!is_uri_part(authority.substr(0, at), ":")) return false;
    authority = authority.substr(at + 1);
  }
  std::string_view host = authority;
  if (authority.starts_with('[')) {
    size_t close = authority.find(']');
    if (close == std::string_view::npos) return false;
    std::string_view literal = authority.substr(1, close - 1);
    if (!is_ipv6(literal)) return false;
    host = {};
    authority = authority.substr(close + 1);
    if (!authority.empty() && authority[0] != ':') return false;
  } else {
    size_t colon = authority.rfind(':');
    host = colon == std::string_view::npos ? authority : authority.substr(0, colon);
    authority = colon == std::string_view::npos ? std::string_view{} : authority.substr(colon);
  }
  if (!is_uri_part(host, "")) return false;
  for (size_t i = 1; i < authority.size(); ++i) {
    if (!is_digit(authority[i])) return false;
  }
  return true;
}

// RFC 3986 URI: scheme ":" hier-part ["?" query] ["#" fragment].
bool is_uri(std::string_view text) {
  size_t colon = text.find(':');
  if (colon == std::string_view::npos || colon == 0 || !is_alpha(text[0])) return false;
  for (size_t i = 1; i < colon; ++i) {
    char c = text[i];
    if (!is_alpha(c) && !is_digit(c) && c != '+' && c != '-' && c != '.') return false;
  }
  std::string_view rest = text.substr(colon + 1);
  size_t hash = rest.find('#');
  if (hash != std::string_view::npos) {
    if (!is_uri_part(rest.substr(hash + 1), ":@/?")) return false;
    rest = rest.substr(0, hash);
  }
  size_t question = rest.find('?');
  if (question != std::string_view::npos) {
    if (!is_uri_part(rest.substr(question + 1), ":@/?")) return false;
    rest = rest.substr(0, question);
  }
  if (rest.starts_with("//")) {
    rest = rest.substr(2);
    size_t slash = rest.find('/');
    if (!is_uri_authority(rest.substr(0, slash))) return false;
    rest = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash);
  }
  return is_uri_part(rest, ":@/");
}

}  // namespace

std::optional<bool> json_schema_format_matches(std::string_view format, std::string_view text) {
  if (format == "date") return is_date(text);
  if (format == "time") return is_time(text);
  if (format == "date-time") return is_date_time(text);
  if (format == "duration") return is_duration(text);
  if (format == "email") return is_email(text);
  if (format == "hostname") return is_hostname(text);
  if (format == "ipv4") return is_ipv4(text);
  if (format == "ipv6") return is_ipv6(text);
  if (format == "uri") return is_uri(text);
  if (format == "uuid") return is_uuid(text);
  return std::nullopt;
}

}  // namespace sluice
