// Philox4x32-10, the counter-based generator of Salmon, Moraes, Dror and Shaw, "Parallel Random
// Numbers: As Easy as 1, 2, 3" (SC11), as published in Random123. A counter-based generator has no
// state: the output is a pure function of (counter, key), so any thread can draw the number for
// any (request, sample, position) without replaying a stream, and a request's random numbers do
// not depend on what else ran in the batch. The code is header-only and constexpr so that the
// CUDA sampler can include it and reproduce the host's numbers bit for bit.
//
// Sampling uniforms (sampling_uniform below) are keyed as follows; the CUDA sampler must use
// exactly this layout:
//   key     = { seed low 32 bits, seed high 32 bits }
//   counter = { position, sample_idx, request_key low 32 bits, request_key high 32 bits }
//   uniform = (output word 0 >> 8) * 2^-24, a float in [0, 1)
// where position is the index of the token being sampled (prompt length + output length).
// Only integer arithmetic and one exact float scaling are involved, so host and device agree
// exactly.
#pragma once

#include <cstdint>

#include "engine/core/host_device.h"

namespace sluice {

// Four 32-bit words: the counter going in, and the random output coming out.
struct PhiloxCounter {
  uint32_t words[4];
};

// Two 32-bit words of key.
struct PhiloxKey {
  uint32_t words[2];
};

namespace philox_detail {

// Round multipliers and Weyl key increments (golden ratio and sqrt(3) - 1) from the paper.
inline constexpr uint32_t kMultiplier0 = 0xD2511F53u;
inline constexpr uint32_t kMultiplier1 = 0xCD9E8D57u;
inline constexpr uint32_t kKeyIncrement0 = 0x9E3779B9u;
inline constexpr uint32_t kKeyIncrement1 = 0xBB67AE85u;

// One Philox S-box round: two 32x32->64 multiplies whose high halves are mixed with the key.
SLUICE_HOST_DEVICE constexpr PhiloxCounter philox4x32_round(PhiloxCounter counter, PhiloxKey key) {
  const uint64_t product0 = static_cast<uint64_t>(kMultiplier0) * counter.words[0];
  const uint64_t product1 = static_cast<uint64_t>(kMultiplier1) * counter.words[2];
  const auto high0 = static_cast<uint32_t>(product0 >> 32);
  const auto high1 = static_cast<uint32_t>(product1 >> 32);
  return PhiloxCounter{{high1 ^ counter.words[1] ^ key.words[0], static_cast<uint32_t>(product1),
                        high0 ^ counter.words[3] ^ key.words[1], static_cast<uint32_t>(product0)}};
}

}  // namespace philox_detail

// Returns Philox4x32 with 10 rounds of counter under key (Random123's philox4x32_R(10, ...)).
SLUICE_HOST_DEVICE constexpr PhiloxCounter philox4x32_10(PhiloxCounter counter, PhiloxKey key) {
  for (int round = 0; round < 10; ++round) {
    // The key is bumped between rounds, not before the first one.
    if (round > 0) {
      key.words[0] += philox_detail::kKeyIncrement0;
      key.words[1] += philox_detail::kKeyIncrement1;
    }
    counter = philox_detail::philox4x32_round(counter, key);
  }
  return counter;
}

// Returns a float in [0, 1) from the top 24 bits of bits: every value is a multiple of 2^-24,
// exactly representable, so the conversion is identical on every host and device.
SLUICE_HOST_DEVICE constexpr float uint32_to_unit_float(uint32_t bits) {
  return static_cast<float>(bits >> 8) * (1.0f / 16777216.0f);
}

// Returns the uniform in [0, 1) that samples token `position` of sample `sample_idx` of the
// request `request_key` under `seed`, with the key/counter layout documented at the top.
SLUICE_HOST_DEVICE constexpr float sampling_uniform(uint64_t seed, uint64_t request_key,
                                                    uint32_t sample_idx, uint32_t position) {
  const PhiloxKey key{{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)}};
  const PhiloxCounter counter{{position, sample_idx, static_cast<uint32_t>(request_key),
                               static_cast<uint32_t>(request_key >> 32)}};
  return uint32_to_unit_float(philox4x32_10(counter, key).words[0]);
}

}  // namespace sluice
