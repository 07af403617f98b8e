#include "engine/grammar/length_bound.h"

#include <algorithm>
#include <vector>

#include "engine/grammar/grammar_budget.h"

namespace sluice {
namespace {

// A repeat of a part of varying length up to this many times is bounded as a choice among its
// counts, each a sequence of copies.
constexpr uint32_t kMaxSpelledRepeats = 4;

uint64_t add_lengths(uint64_t a, uint64_t b) {
  if (a == kUnboundedLength || b == kUnboundedLength || a > kUnboundedLength - b)
    return kUnboundedLength;
  return a + b;
}

uint64_t multiply_length(uint64_t length, uint64_t count) {
  if (length == 0 || count == 0) return 0;
  if (length == kUnboundedLength || count == kUnboundedLength || length > kUnboundedLength / count)
    return kUnboundedLength;
  return length * count;
}

uint64_t subtract_length(uint64_t a, uint64_t b) {
  return a == kUnboundedLength ? kUnboundedLength : a - b;
}

std::optional<uint64_t> finite(uint64_t length) {
  if (length == kUnboundedLength) return std::nullopt;
  return length;
}

GrammarExpr repeat_of(GrammarExpr child, uint64_t lo, uint64_t hi) {
  GrammarExpr out;
  out.kind = GrammarExpr::Kind::Repeat;
  out.children.push_back(std::move(child));
  out.min_count = static_cast<uint32_t>(lo);
  out.max_count = hi == kUnboundedLength ? kUnboundedRepeat : static_cast<uint32_t>(hi);
  return out;
}

// A repeat of child (every sentence of which has length c > 0) from min_count to max_count times
// whose lengths lie within [lo, hi].
std::optional<GrammarExpr> bound_fixed_repeat(const GrammarExpr& child, uint64_t c,
                                              uint32_t min_count, uint32_t max_count, uint64_t lo,
                                              uint64_t hi) {
  uint64_t k_lo = std::max<uint64_t>(min_count, (lo + c - 1) / c);
  uint64_t k_hi = max_count == kUnboundedRepeat ? kUnboundedLength : max_count;
  if (hi != kUnboundedLength) k_hi = std::min(k_hi, hi / c);
  if (k_hi != kUnboundedLength) k_hi = std::min<uint64_t>(k_hi, kMaxGrammarRepeat);
  if (k_lo > kMaxGrammarRepeat || (k_hi != kUnboundedLength && k_lo > k_hi)) return std::nullopt;
  return repeat_of(child, k_lo, k_hi);
}

std::optional<GrammarExpr> bound_repeat(const GrammarExpr& expr, uint64_t lo, uint64_t hi) {
  const GrammarExpr& child = expr.children.at(0);
  LengthRange range = expr_length(child);
  if (range.lo == range.hi && range.lo > 0)
    return bound_fixed_repeat(child, range.lo, expr.min_count, expr.max_count, lo, hi);
  // A few repeats at most: one of k copies for each count k, each shared out as a sequence.
  if (expr.max_count <= kMaxSpelledRepeats) {
    GrammarExpr choice;
    choice.kind = GrammarExpr::Kind::Choice;
    for (uint32_t k = expr.min_count; k <= expr.max_count; ++k) {
      GrammarExpr copies;
      copies.children.assign(k, child);
      if (auto part = bound_length(copies, lo, finite(hi)))
        choice.children.push_back(std::move(*part));
    }
    if (choice.children.empty()) return std::nullopt;
    if (choice.children.size() == 1) return std::move(choice.children[0]);
    return choice;
  }
  uint64_t first = std::max<uint64_t>(range.lo, 1);
  if (hi != kUnboundedLength) {
    // The part between lengths a and b, repeated k_lo to k_hi times: the fewest repeats reach
    // lo at length a, the most stay within hi at length b.
    uint64_t k_lo = lo == 0 ? expr.min_count : std::max<uint32_t>(expr.min_count, 1);
    uint64_t a = k_lo == 0 ? first : std::max(first, (lo + k_lo - 1) / k_lo);
    if (a > range.hi) {
      k_lo = (lo + range.hi - 1) / range.hi;
      a = std::max(first, (lo + k_lo - 1) / k_lo);
    }
    uint64_t b = std::min(range.hi, hi / std::max<uint64_t>(k_lo, 1));
    uint64_t k_hi = b > 0 ? hi / b : 0;
    if (expr.max_count != kUnboundedRepeat) k_hi = std::min<uint64_t>(k_hi, expr.max_count);
    k_hi = std::min<uint64_t>(k_hi, kMaxGrammarRepeat);
    if (a <= b && k_lo <= k_hi) {
      if (auto part = bound_length(child, a, b)) return repeat_of(std::move(*part), k_lo, k_hi);
    }
  }
  // Otherwise the part is kept at one length, the shortest non-zero one that works.
  for (uint64_t c = first; c < first + 4 && c <= range.hi; ++c) {
    auto fixed = bound_length(child, c, c);
    if (!fixed) continue;
    if (auto out = bound_fixed_repeat(*fixed, c, expr.min_count, expr.max_count, lo, hi))
      return out;
  }
  return std::nullopt;
}

// A sequence whose parts get lengths within [lo, hi] in all: each part its shortest, then what
// lo still needs, then what hi still allows, given to the parts in order (or in reverse order).
std::optional<GrammarExpr> bound_sequence(const GrammarExpr& expr, uint64_t lo, uint64_t hi,
                                          bool reverse) {
  size_t n = expr.children.size();
  std::vector<LengthRange> ranges(n);
  std::vector<uint64_t> a(n), b(n);
  uint64_t total = 0;
  for (size_t i = 0; i < n; ++i) {
    ranges[i] = expr_length(expr.children[i]);
    a[i] = ranges[i].lo;
    total = add_lengths(total, a[i]);
  }
  if (total == kUnboundedLength || (hi != kUnboundedLength && total > hi)) return std::nullopt;
  uint64_t deficit = lo > total ? lo - total : 0;
  for (size_t step = 0; step < n && deficit > 0; ++step) {
    size_t i = reverse ? n - 1 - step : step;
    uint64_t extra = std::min(deficit, subtract_length(ranges[i].hi, a[i]));
    a[i] += extra;
    deficit -= extra;
    total += extra;
  }
  if (deficit > 0) return std::nullopt;
  uint64_t slack = hi == kUnboundedLength ? kUnboundedLength : hi - total;
  b = a;
  if (slack == kUnboundedLength) {
    for (size_t i = 0; i < n; ++i) b[i] = ranges[i].hi;
  } else {
    // What hi allows is shared out evenly among the parts that can grow, a round at a time.
    while (slack > 0) {
      size_t num_growing = 0;
      for (size_t i = 0; i < n; ++i) num_growing += b[i] < ranges[i].hi;
      if (num_growing == 0) break;
      uint64_t share = std::max<uint64_t>(slack / num_growing, 1);
      for (size_t step = 0; step < n && slack > 0; ++step) {
        size_t i = reverse ? n - 1 - step : step;
        uint64_t add = std::min({share, slack, subtract_length(ranges[i].hi, b[i])});
        b[i] += add;
        slack -= add;
      }
    }
  }
  GrammarExpr out = expr;
  for (size_t i = 0; i < n; ++i) {
    auto part = bound_length(expr.children[i], a[i], finite(b[i]));
    if (!part) return std::nullopt;
    out.children[i] = std::move(*part);
  }
  return out;
}

bool inline_into(const GrammarExpr& expr, const std::map<std::string, GrammarExpr>& rules,
                 int depth, size_t max_exprs, size_t& num_exprs, GrammarExpr& out) {
  if (++num_exprs > max_exprs) return false;
  if (expr.kind == GrammarExpr::Kind::RuleRef) {
    auto rule = rules.find(expr.rule_name);
    if (rule == rules.end() || depth <= 0) return false;
    return inline_into(rule->second, rules, depth - 1, max_exprs, num_exprs, out);
  }
  out = expr;
  out.children.clear();
  for (const GrammarExpr& child : expr.children) {
    GrammarExpr inlined;
    if (!inline_into(child, rules, depth, max_exprs, num_exprs, inlined)) return false;
    out.children.push_back(std::move(inlined));
  }
  return true;
}

}  // namespace

LengthRange expr_length(const GrammarExpr& expr) {
  switch (expr.kind) {
    case GrammarExpr::Kind::Chars:
      return {1, 1};
    case GrammarExpr::Kind::RuleRef:
      return {0, kUnboundedLength};
    case GrammarExpr::Kind::Sequence: {
      LengthRange out;
      for (const GrammarExpr& child : expr.children) {
        LengthRange part = expr_length(child);
        out.lo = add_lengths(out.lo, part.lo);
        out.hi = add_lengths(out.hi, part.hi);
      }
      return out;
    }
    case GrammarExpr::Kind::Choice: {
      if (expr.children.empty()) return {};
      LengthRange out{kUnboundedLength, 0};
      for (const GrammarExpr& child : expr.children) {
        LengthRange part = expr_length(child);
        out.lo = std::min(out.lo, part.lo);
        out.hi = std::max(out.hi, part.hi);
      }
      return out;
    }
    case GrammarExpr::Kind::Repeat: {
      LengthRange part = expr_length(expr.children.at(0));
      uint64_t max_count =
          expr.max_count == kUnboundedRepeat ? kUnboundedLength : uint64_t{expr.max_count};
      return {multiply_length(part.lo, expr.min_count), multiply_length(part.hi, max_count)};
    }
  }
  return {0, kUnboundedLength};
}

std::optional<GrammarExpr> inline_rules(const GrammarExpr& expr,
                                        const std::map<std::string, GrammarExpr>& rules,
                                        int max_depth, size_t max_exprs) {
  GrammarExpr out;
  size_t num_exprs = 0;
  if (!inline_into(expr, rules, max_depth, max_exprs, num_exprs, out)) return std::nullopt;
  return out;
}

std::optional<GrammarExpr> bound_length(const GrammarExpr& expr, uint64_t lo,
                                        std::optional<uint64_t> hi_bound) {
  uint64_t hi = hi_bound.value_or(kUnboundedLength);
  if (lo > hi) return std::nullopt;
  LengthRange range = expr_length(expr);
  if (range.lo >= lo && range.hi <= hi) return expr;
  if (range.lo > hi || range.hi < lo) return std::nullopt;
  switch (expr.kind) {
    case GrammarExpr::Kind::Chars:
    case GrammarExpr::Kind::RuleRef:
      return std::nullopt;
    case GrammarExpr::Kind::Choice: {
      GrammarExpr out = expr;
      out.children.clear();
      for (const GrammarExpr& child : expr.children) {
        if (auto part = bound_length(child, lo, hi_bound)) out.children.push_back(std::move(*part));
      }
      if (out.children.empty()) return std::nullopt;
      if (out.children.size() == 1) return std::move(out.children[0]);
      return out;
    }
    case GrammarExpr::Kind::Sequence: {
      if (auto out = bound_sequence(expr, lo, hi, /*reverse=*/false)) return out;
      return bound_sequence(expr, lo, hi, /*reverse=*/true);
    }
    case GrammarExpr::Kind::Repeat:
      return bound_repeat(expr, lo, hi);
  }
  return std::nullopt;
}

}  // namespace sluice
