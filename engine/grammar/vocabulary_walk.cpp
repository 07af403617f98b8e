#include "engine/grammar/vocabulary_walk.h"

#include <string_view>
#include <vector>

namespace sluice {
namespace {

struct WalkLevel {
  std::vector<int32_t> stacks;
  Utf8Decoder utf8;
  bool is_dependent = false;  // some parse of this prefix reached the Sentinel
};

}  // namespace

void walk_tokens(GrammarStackArena& arena, std::span<const int32_t> stacks, const Utf8Decoder& utf8,
                 const TokenVocabulary& vocabulary, std::span<const int32_t> sorted_ids,
                 const std::function<void(int32_t, TokenVerdict)>& on_token) {
  std::vector<WalkLevel> levels(1);
  levels[0].stacks.assign(stacks.begin(), stacks.end());
  levels[0].utf8 = utf8;
  std::string_view previous;
  size_t num_valid = 0;  // levels[0..num_valid] hold the states after that many bytes of previous
  bool previous_died = false;
  bool died_dependent = false;
  for (int32_t id : sorted_ids) {
    const std::string& bytes = vocabulary.token_bytes(id);
    size_t shared = 0;
    size_t limit = std::min(previous.size(), bytes.size());
    while (shared < limit && previous[shared] == bytes[shared]) ++shared;
    if (previous_died && shared > num_valid) {
      // The same dead prefix: the same verdict.
      on_token(id, died_dependent ? TokenVerdict::Dependent : TokenVerdict::Rejected);
      previous = bytes;
      continue;
    }
    size_t k = std::min(shared, num_valid);
    previous_died = false;
    if (levels.size() < bytes.size() + 1) levels.resize(bytes.size() + 1);
    for (; k < bytes.size(); ++k) {
      WalkLevel& from = levels[k];
      WalkLevel& to = levels[k + 1];
      to.utf8 = from.utf8;
      bool hit_sentinel = false;
      bool alive = arena.step_byte(from.stacks, to.utf8, static_cast<uint8_t>(bytes[k]), to.stacks,
                                   &hit_sentinel);
      to.is_dependent = from.is_dependent || hit_sentinel;
      if (!alive) {
        previous_died = true;
        died_dependent = to.is_dependent;
        break;
      }
    }
    num_valid = previous_died ? k : bytes.size();
    TokenVerdict verdict = TokenVerdict::Accepted;
    if (previous_died) verdict = died_dependent ? TokenVerdict::Dependent : TokenVerdict::Rejected;
    on_token(id, verdict);
    previous = bytes;
  }
}

}  // namespace sluice
