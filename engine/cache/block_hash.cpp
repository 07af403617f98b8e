#include "engine/cache/block_hash.h"

namespace sluice {

namespace {

// SplitMix64's finalizer: a bijection on 64 bits in which every input bit flips each output
// bit with probability about one half, so nearby token ids land far apart.
uint64_t mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

constexpr uint64_t kGoldenGamma = 0x9e3779b97f4a7c15ULL;

}  // namespace

uint64_t hash_block(uint64_t parent_hash, std::span<const int32_t> token_ids) {
  uint64_t h = mix64(parent_hash + kGoldenGamma);
  // Each step is a bijection of the state for a fixed token, so two token sequences that differ
  // in one place cannot meet again by the end unless the whole 64-bit state collides.
  for (const int32_t token_id : token_ids) {
    h = mix64(h ^ (static_cast<uint64_t>(static_cast<uint32_t>(token_id)) + kGoldenGamma));
  }
  // The length keeps a block from hashing like its own prefix padded by the state.
  return mix64(h ^ static_cast<uint64_t>(token_ids.size()));
}

}  // namespace sluice
