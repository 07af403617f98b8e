// Content hashes of full KV blocks for the prefix cache. A block's hash covers its parent
// block's hash and its own token ids, so equal hashes stand for equal whole prefixes and one
// table lookup per block finds the longest shared prefix.
//
// The hash is 64 bits. A collision would hand a request another prefix's K/V and silently
// corrupt its output, so a lookup never trusts the hash alone: BlockPool keeps each cached
// block's parent hash and token ids and a hit must match both exactly. What remains is a true
// 64-bit collision between two different (parent hash, tokens) inputs one level up, which the
// strong mixing below makes as unlikely as a random 64-bit match.
#pragma once

#include <cstdint>
#include <span>

namespace sluice {

// The parent hash of a sequence's first block.
inline constexpr uint64_t kRootBlockHash = 0x5d1ce5eedc0ffee1ULL;

// Returns the hash of one block: its parent block's hash and its token ids.
uint64_t hash_block(uint64_t parent_hash, std::span<const int32_t> token_ids);

}  // namespace sluice
