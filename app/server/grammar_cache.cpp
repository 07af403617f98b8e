#include "app/server/grammar_cache.h"

namespace sluice {

namespace {

// The source's kind, text and choices, each length-prefixed (choices may hold any character).
std::string cache_key(const GrammarSource& source) {
  std::string key = to_string(source.kind);
  const auto add = [&](const std::string& part) {
    key += '|';
    key += std::to_string(part.size());
    key += ':';
    key += part;
  };
  add(source.text);
  for (const std::string& choice : source.choices) add(choice);
  return key;
}

}  // namespace

std::shared_ptr<const Grammar> GrammarCache::get(const GrammarSource& source) {
  const std::string key = cache_key(source);
  std::lock_guard lock(mutex_);
  if (const auto it = by_key_.find(key); it != by_key_.end()) {
    entries_.splice(entries_.begin(), entries_, it->second);
    return it->second->second;
  }
  auto grammar = std::make_shared<const Grammar>(build_grammar(source));
  entries_.emplace_front(key, grammar);
  by_key_[key] = entries_.begin();
  while (entries_.size() > capacity_) {
    by_key_.erase(entries_.back().first);
    entries_.pop_back();
  }
  return grammar;
}

size_t GrammarCache::size() const {
  std::lock_guard lock(mutex_);
  return entries_.size();
}

}  // namespace sluice
