#include "tests/support/tiny_arch_reference.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>

#include "tests/support/test_paths.h"

namespace sluice::test {

TinyArchReference read_tiny_arch_reference(const std::string& dir) {
  TinyArchReference r;
  const auto meta = nlohmann::json::parse(read_file(dir + "/logits.json"));
  r.tokens = meta.at("tokens").get<std::vector<int32_t>>();
  r.n_prompt = meta.at("n_prompt").get<int>();
  const std::string bytes = read_file(dir + "/logits.bin");
  r.logits.resize(bytes.size() / sizeof(float));
  std::memcpy(r.logits.data(), bytes.data(), r.logits.size() * sizeof(float));
  const auto check = nlohmann::json::parse(read_file(dir + "/check.json"));
  r.greedy_margins = check.at("greedy_margins").get<std::vector<double>>();
  return r;
}

float max_row_difference(const float* a, const float* b, int vocab) {
  float m = 0.0f;
  for (int i = 0; i < vocab; ++i) {
    const float d = std::fabs(a[i] - b[i]);
    if (std::isnan(d)) return std::numeric_limits<float>::infinity();  // std::max would skip it
    m = std::max(m, d);
  }
  return m;
}

}  // namespace sluice::test
