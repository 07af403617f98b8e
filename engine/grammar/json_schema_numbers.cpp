// Integers and numbers of a JSON Schema as GBNF: bounds (exact for integers), multipleOf.
#include <cmath>
#include <vector>

#include "engine/grammar/choice_grammar.h"
#include "engine/grammar/json_schema_converter.h"

namespace sluice {
namespace {

// Digit strings a <= b of equal length n >= 1: the GBNF matching every n-digit string in [a, b].
std::string digit_range(const std::string& a, const std::string& b) {
  if (a.size() == 1) {
    return a == b ? gbnf_literal(a) : str_cat("[", a, "-", b, "]");
  }
  if (a[0] == b[0]) {
    return str_cat(gbnf_literal(a.substr(0, 1)), " ", digit_range(a.substr(1), b.substr(1)));
  }
  std::string rest_a = a.substr(1), rest_b = b.substr(1);
  std::string nines(rest_a.size(), '9'), zeros(rest_a.size(), '0');
  std::string any_rest = str_cat(" [0-9]{", rest_a.size(), "}");
  // Only the first and last leading digits need a narrower rest; keeps the output O(n^2).
  std::vector<std::string> alternatives;
  char lo_digit = a[0], hi_digit = b[0];
  if (rest_a != zeros) {
    alternatives.push_back(str_cat(gbnf_literal(a.substr(0, 1)), " ", digit_range(rest_a, nines)));
    ++lo_digit;
  }
  if (rest_b != nines) --hi_digit;
  if (lo_digit <= hi_digit)
    alternatives.push_back(str_cat("[", lo_digit, "-", hi_digit, "]", any_rest));
  if (rest_b != nines) {
    alternatives.push_back(str_cat(gbnf_literal(b.substr(0, 1)), " ", digit_range(zeros, rest_b)));
  }
  std::string out = "(";
  for (size_t i = 0; i < alternatives.size(); ++i) out += (i ? " | " : " ") + alternatives[i];
  return out + " )";
}

constexpr int kMaxIntegerDigits = 16;
// multipleOf is written as a divisibility automaton up to this divisor (one rule per remainder),
// and as the list of the multiples in range up to this many.
constexpr int64_t kMaxMultipleOfAutomaton = 100;
constexpr int64_t kMaxListedMultiples = 1000;

// Every nonnegative integer in [lo, hi] (hi < 0: unbounded, up to kMaxIntegerDigits digits).
std::vector<std::string> nonnegative_range(int64_t lo, int64_t hi) {
  std::vector<std::string> alternatives;
  std::string lo_text = std::to_string(lo);
  size_t max_len = hi < 0 ? kMaxIntegerDigits : std::to_string(hi).size();
  for (size_t len = lo_text.size(); len <= max_len; ++len) {
    std::string lower = lo_text;
    if (len != lo_text.size()) {  // 10...0 (built in place: GCC 12 -O3 misreads "1" + zeros)
      lower.assign(len, '0');
      lower[0] = '1';
    }
    std::string upper = (hi >= 0 && len == max_len) ? std::to_string(hi) : std::string(len, '9');
    alternatives.push_back(digit_range(lower, upper));
  }
  return alternatives;
}

}  // namespace

std::string integer_range_gbnf(std::optional<int64_t> lo, std::optional<int64_t> hi) {
  std::vector<std::string> alternatives;
  int64_t nonneg_lo = std::max<int64_t>(lo.value_or(0), 0);
  if (!hi || *hi >= nonneg_lo) {
    for (auto& a : nonnegative_range(nonneg_lo, hi ? *hi : -1)) alternatives.push_back(a);
  }
  if (!lo || *lo < 0) {
    int64_t magnitude_lo = std::max<int64_t>(hi ? -*hi : 1, 1);
    int64_t magnitude_hi = lo ? -*lo : -1;
    if (magnitude_hi < 0 || magnitude_hi >= magnitude_lo) {
      std::string negative = "\"-\" (";
      auto parts = nonnegative_range(magnitude_lo, magnitude_hi);
      for (size_t i = 0; i < parts.size(); ++i) negative += (i ? " | " : " ") + parts[i];
      alternatives.push_back(negative + " )");
    }
  }
  if (alternatives.empty()) return "";
  std::string out = "(";
  for (size_t i = 0; i < alternatives.size(); ++i) out += (i ? " | " : " ") + alternatives[i];
  return out + " )";
}

// Reads a bound (draft-04's boolean exclusiveMinimum/Maximum were rewritten into numbers).
std::optional<double> SchemaConverter::bound(const SchemaJson& schema, const char* keyword,
                                             const std::string& pointer) {
  if (!schema.contains(keyword)) return std::nullopt;
  const SchemaJson& value = schema[keyword];
  if (!value.is_number()) error(pointer + "/" + keyword, "'", keyword, "' must be a number");
  double d = value.get<double>();
  if (!std::isfinite(d)) error(pointer + "/" + keyword, "'", keyword, "' must be finite");
  // Numbers are written within ±1e15: a lower bound below that (or an upper one above) is
  // lowered (raised) to it, a narrowing; one that needs larger numbers cannot be written.
  bool is_lower = std::string_view(keyword).ends_with("inimum");
  if (is_lower && d < -1e15) return -1e15;
  if (!is_lower && d > 1e15) return 1e15;
  if (std::fabs(d) > 1e15)
    refuse(pointer + "/" + keyword, "'", keyword, "' past ±1e15 is not supported");
  return d;
}

std::string SchemaConverter::visit_number(const SchemaJson& schema, const std::string& pointer,
                                          bool is_integer) {
  auto minimum = bound(schema, "minimum", pointer);
  auto maximum = bound(schema, "maximum", pointer);
  auto exclusive_minimum = bound(schema, "exclusiveMinimum", pointer);
  auto exclusive_maximum = bound(schema, "exclusiveMaximum", pointer);
  // Tightest lower and upper bound, with whether each is exclusive.
  std::optional<double> lo = minimum, hi = maximum;
  bool lo_exclusive = false, hi_exclusive = false;
  if (exclusive_minimum && (!lo || *exclusive_minimum >= *lo)) {
    lo = exclusive_minimum;
    lo_exclusive = true;
  }
  if (exclusive_maximum && (!hi || *exclusive_maximum <= *hi)) {
    hi = exclusive_maximum;
    hi_exclusive = true;
  }
  std::optional<int64_t> int_lo, int_hi;
  if (lo) int_lo = static_cast<int64_t>(lo_exclusive ? std::floor(*lo) + 1 : std::ceil(*lo));
  if (hi) int_hi = static_cast<int64_t>(hi_exclusive ? std::ceil(*hi) - 1 : std::floor(*hi));
  if (schema.contains("multipleOf")) {
    const SchemaJson& multiple = schema["multipleOf"];
    std::string here = pointer + "/multipleOf";
    if (!multiple.is_number() || !(multiple.get<double>() > 0))
      error(here, "'multipleOf' must be a number above 0");
    double k_value = multiple.get<double>();
    if (std::floor(k_value) != k_value || k_value > 1e15) {
      refuse(here, "unsupported keyword 'multipleOf' (only a whole divisor is enforced, not ",
             multiple.dump(), ")");
    }
    // Only integer multiples are written (a narrowing for "number").
    auto k = static_cast<int64_t>(k_value);
    if (k > 1 && (int_lo || int_hi)) {
      if (!int_lo || !int_hi)
        refuse(here, "unsupported keyword 'multipleOf' (with a bound on one side only)");
      int64_t first = *int_lo >= 0 ? (*int_lo + k - 1) / k * k : -((-*int_lo) / k * k);
      if (first > *int_hi) error(pointer, "no multiple of ", k, " lies within the bounds");
      if ((*int_hi - first) / k >= kMaxListedMultiples)
        refuse(here, "unsupported keyword 'multipleOf' (more than ", kMaxListedMultiples,
               " multiples within the bounds)");
      std::string body;
      for (int64_t v = first; v <= *int_hi; v += k)
        body += (body.empty() ? "" : " | ") + gbnf_literal(std::to_string(v));
      return add_rule(body);
    }
    if (k > 1) {
      if (k > kMaxMultipleOfAutomaton) {
        refuse(here, "unsupported keyword 'multipleOf' (a divisor above ", kMaxMultipleOfAutomaton,
               " without bounds)");
      }
      // State (r, n): the digits so far are r modulo k, and at most n more may follow (15
      // digits in all: a double holds the value exactly, so every reader sees a multiple).
      // Only states from which a multiple can still be reached are written. Rules named after
      // the divisor, made once.
      constexpr int kMaxDigits = 15;
      std::string prefix = str_cat("mul", k, "r");
      auto state = [&](int64_t r, int n) { return str_cat(prefix, r, "n", n); };
      // reachable[n][r]: a multiple can be reached from remainder r with at most n more digits.
      std::vector<std::vector<bool>> reachable(kMaxDigits, std::vector<bool>(k, false));
      for (int n = 0; n < kMaxDigits; ++n) {
        for (int64_t r = 0; r < k; ++r) {
          bool can = r == 0;
          for (int d = 0; d <= 9 && !can && n > 0; ++d) can = reachable[n - 1][(10 * r + d) % k];
          reachable[n][r] = can;
        }
      }
      if (!ref_rules_.count(prefix)) {
        ref_rules_[prefix] = prefix;
        for (int n = 0; n < kMaxDigits; ++n) {
          for (int64_t r = 0; r < k; ++r) {
            if (!reachable[n][r]) continue;
            std::string body = r == 0 ? "\"\"" : "";
            for (int d = 0; d <= 9 && n > 0; ++d) {
              int64_t next = (10 * r + d) % k;
              if (!reachable[n - 1][next]) continue;
              body += str_cat(body.empty() ? "" : " | ", "\"", d, "\" ", state(next, n - 1));
            }
            rules_.emplace_back(state(r, n), body);
          }
        }
      }
      std::string first;
      for (int d = 1; d <= 9; ++d) {
        if (!reachable[kMaxDigits - 1][d % k]) continue;
        first += str_cat(first.empty() ? "" : " | ", "\"", d, "\" ", state(d % k, kMaxDigits - 1));
      }
      return add_rule(str_cat("\"0\" | \"-\"? ( ", first, " )"));
    }
    is_integer = true;
  }
  if (!lo && !hi) return is_integer ? "integer" : "number";
  std::vector<std::string> alternatives;
  std::string plain = integer_range_gbnf(int_lo, int_hi);
  if (!plain.empty()) alternatives.push_back(plain);
  if (!is_integer) {
    constexpr const char* kFraction = " \".\" [0-9]{0,14} [1-9]";
    // M.ddd in (M, M + 1) needs lo <= M and M + 1 <= hi.
    std::optional<int64_t> m_lo = static_cast<int64_t>(std::max(lo ? std::ceil(*lo) : 0.0, 0.0));
    std::optional<int64_t> m_hi;
    if (hi) m_hi = static_cast<int64_t>(std::floor(*hi)) - 1;
    if (!m_hi || *m_hi >= *m_lo) {
      std::string positive = integer_range_gbnf(m_lo, m_hi);
      if (!positive.empty()) alternatives.push_back(positive + kFraction);
    }
    // -M.ddd in (-(M + 1), -M) needs lo <= -(M + 1) and -M <= hi.
    std::optional<int64_t> n_lo = static_cast<int64_t>(std::max(hi ? std::ceil(-*hi) : 0.0, 0.0));
    std::optional<int64_t> n_hi;
    if (lo) n_hi = static_cast<int64_t>(std::floor(-*lo)) - 1;
    if (!n_hi || *n_hi >= *n_lo) {
      std::string negative = integer_range_gbnf(n_lo, n_hi);
      if (!negative.empty()) alternatives.push_back("\"-\" " + negative + kFraction);
    }
  }
  if (alternatives.empty())
    error(pointer, "no ", is_integer ? "integer" : "number", " lies within the bounds");
  std::string body;
  for (size_t i = 0; i < alternatives.size(); ++i) body += (i ? " | " : "") + alternatives[i];
  return add_rule(body);
}

}  // namespace sluice
