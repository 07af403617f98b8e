#include "engine/grammar/grammar_cache.h"

#include <algorithm>

namespace sluice {

GrammarCache::GrammarCache(size_t capacity, size_t max_symbols, Builder builder, int max_builds)
    : capacity_(capacity),
      max_symbols_(max_symbols),
      builder_(std::move(builder)),
      build_slots_(std::clamp(max_builds, 1, kMaxConcurrentBuilds)) {}

std::shared_ptr<const Grammar> GrammarCache::get(const GrammarSource& source) {
  const std::string key = grammar_source_key(source);
  {
    std::lock_guard lock(mutex_);
    if (const auto it = by_key_.find(key); it != by_key_.end()) {
      entries_.splice(entries_.begin(), entries_, it->second);
      return it->second->second;
    }
  }
  build_slots_.acquire();
  std::shared_ptr<const Grammar> grammar;
  try {
    grammar = std::make_shared<const Grammar>(builder_(source));
  } catch (...) {
    build_slots_.release();
    throw;
  }
  build_slots_.release();
  std::lock_guard lock(mutex_);
  if (const auto it = by_key_.find(key); it != by_key_.end()) {  // built beside this call
    entries_.splice(entries_.begin(), entries_, it->second);
    return it->second->second;
  }
  entries_.emplace_front(key, grammar);
  by_key_[key] = entries_.begin();
  num_symbols_ += grammar->num_positions();
  while (entries_.size() > capacity_ || (entries_.size() > 1 && num_symbols_ > max_symbols_)) {
    num_symbols_ -= entries_.back().second->num_positions();
    by_key_.erase(entries_.back().first);
    entries_.pop_back();
  }
  return grammar;
}

size_t GrammarCache::size() const {
  std::lock_guard lock(mutex_);
  return entries_.size();
}

size_t GrammarCache::num_symbols() const {
  std::lock_guard lock(mutex_);
  return num_symbols_;
}

}  // namespace sluice
