// The server's compiled grammars, by source: requests that ask for the same structure share one
// Grammar (and so the engine's cached token masks for it). Bounded: the least recently used
// sources are dropped past the capacity, and the engine lets go of a grammar's masks once no
// request uses it any more.
#pragma once

#include <cstddef>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

#include "engine/grammar/grammar.h"
#include "engine/grammar/grammar_source.h"

namespace sluice {

class GrammarCache {
 public:
  explicit GrammarCache(size_t capacity = 64) : capacity_(capacity) {}

  // Returns the grammar of source, built once while it stays among the `capacity` most recently
  // used. Throws Error as build_grammar does (naming the keyword, line or character at fault).
  // Thread-safe.
  std::shared_ptr<const Grammar> get(const GrammarSource& source);

  size_t size() const;

 private:
  using Entry = std::pair<std::string, std::shared_ptr<const Grammar>>;

  size_t capacity_;
  mutable std::mutex mutex_;
  std::list<Entry> entries_;  // most recently used first
  std::unordered_map<std::string, std::list<Entry>::iterator> by_key_;
};

}  // namespace sluice
