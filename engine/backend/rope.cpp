#include "engine/backend/rope.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numbers>

namespace sluice {

namespace {

// The pair index at which a rotation turns `rotations` times over the original context
// (llama.cpp's ggml_rope_yarn_corr_dim).
double yarn_corr_dim(int dims, int original_context, double rotations, double theta) {
  return dims * std::log(original_context / (rotations * 2.0 * std::numbers::pi)) /
         (2.0 * std::log(theta));
}

// YaRN: pair i turns at (1 - mix) / factor + mix of its speed, mix ramping from 1 below the
// band [low, high] to 0 above it (llama.cpp's rope_yarn with ext_factor 1).
void apply_yarn(const RopeScaling& s, double theta, int dims, std::vector<double>& inv_freq) {
  double low = yarn_corr_dim(dims, s.original_max_position_embeddings, s.beta_fast, theta);
  double high = yarn_corr_dim(dims, s.original_max_position_embeddings, s.beta_slow, theta);
  if (s.yarn_truncate) {
    low = std::floor(low);
    high = std::ceil(high);
  }
  low = std::max(0.0, low);
  high = std::min(static_cast<double>(dims - 1), high);
  for (size_t i = 0; i < inv_freq.size(); ++i) {
    const double y = (static_cast<double>(i) - low) / std::max(0.001, high - low);
    const double mix = 1.0 - std::min(1.0, std::max(0.0, y));
    inv_freq[i] *= (1.0 - mix) / s.factor + mix;
  }
}

}  // namespace

std::vector<double> rope_inverse_frequencies(const ModelConfig& config,
                                             const WeightTensor& freq_factors) {
  return rope_inverse_frequencies(config, config.rope_theta, config.rope_scaling, freq_factors);
}

std::vector<double> rope_inverse_frequencies(const ModelConfig& config, int layer,
                                             const WeightTensor& freq_factors) {
  if (config.layers.empty()) return rope_inverse_frequencies(config, freq_factors);
  const LayerConfig& l = config.layers[static_cast<size_t>(layer)];
  return rope_inverse_frequencies(config, l.rope_theta, l.rope_scaling, freq_factors);
}

std::vector<double> rope_inverse_frequencies(const ModelConfig& config, float theta,
                                             const RopeScaling& s,
                                             const WeightTensor& freq_factors) {
  const int dims = config.rope_dims();
  const int num_pairs = dims / 2;
  std::vector<double> inv_freq(static_cast<size_t>(num_pairs));
  for (int i = 0; i < num_pairs; ++i)
    inv_freq[static_cast<size_t>(i)] = 1.0 / std::pow(static_cast<double>(theta), 2.0 * i / dims);
  if (s.type == RopeScaling::Type::LongRope) {
    const bool long_context = config.max_position_embeddings > s.original_max_position_embeddings;
    const std::vector<float>& factors = long_context ? s.long_factor : s.short_factor;
    for (size_t i = 0; i < inv_freq.size() && i < factors.size(); ++i) inv_freq[i] /= factors[i];
  } else if (s.type == RopeScaling::Type::Yarn) {
    apply_yarn(s, theta, dims, inv_freq);
  } else if (s.type == RopeScaling::Type::Linear) {
    for (auto& f : inv_freq) f /= s.factor;
  } else if (s.type == RopeScaling::Type::Llama3) {
    // Long wavelengths are slowed by `factor`, short ones kept, the band between blended.
    const double low_freq_wavelen = s.original_max_position_embeddings / s.low_freq_factor;
    const double high_freq_wavelen = s.original_max_position_embeddings / s.high_freq_factor;
    for (auto& f : inv_freq) {
      const double wavelen = 2.0 * std::numbers::pi / f;
      if (wavelen > low_freq_wavelen) {
        f /= s.factor;
      } else if (wavelen >= high_freq_wavelen) {
        const double smooth = (s.original_max_position_embeddings / wavelen - s.low_freq_factor) /
                              (s.high_freq_factor - s.low_freq_factor);
        f = (1.0 - smooth) * f / s.factor + smooth * f;
      }
    }
  }
  if (!freq_factors.empty()) {
    for (int i = 0; i < num_pairs; ++i) {
      float factor;
      std::memcpy(&factor, freq_factors.data + 4 * static_cast<size_t>(i), sizeof factor);
      inv_freq[static_cast<size_t>(i)] /= factor;
    }
  }
  return inv_freq;
}

}  // namespace sluice
