// Compiled grammars by source, and the one place a request's grammar is compiled: an engine
// service compiles every request's source through its cache (EngineService::submit), so requests
// that ask for the same structure share one Grammar (and so the engine's cached token masks for
// it). A compiled grammar does not depend on the model (the engine binds it to its vocabulary),
// so one cache may serve every service of a ModelHost and the checks made before a run. Bounded:
// the least recently used sources are dropped past the capacity or past a total size, and the
// engine lets go of a grammar's masks once no request uses it any more. A grammar is built on
// the caller's thread (an HTTP handler's, a job's; never the engine's, never the GUI's) outside
// the cache's lock, so a slow compile holds up nobody else's request; at most a few build at once
// (each may take up to about 100 MB while it compiles, grammar_budget.h), the others wait for a
// turn.
#pragma once

#include <cstddef>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <semaphore>
#include <string>
#include <unordered_map>
#include <utility>

#include "engine/grammar/grammar.h"
#include "engine/grammar/grammar_source.h"

namespace sluice {

class GrammarCache {
 public:
  using Builder = std::function<Grammar(const GrammarSource&)>;

  // The most builds at once a cache allows.
  static constexpr int kMaxConcurrentBuilds = 64;

  // Keeps at most capacity grammars of at most max_symbols symbols in all (the newest is kept
  // whatever its size) and builds at most max_builds at once (<= kMaxConcurrentBuilds). builder
  // compiles a source (build_grammar unless a test says otherwise).
  explicit GrammarCache(size_t capacity = 64, size_t max_symbols = 4 * kMaxGrammarSymbols,
                        Builder builder = build_grammar, int max_builds = 2);

  // Returns the grammar of source, built once while it stays among the most recently used.
  // Throws Error as build_grammar does (naming the keyword, line, character or limit at fault).
  // Thread-safe; two callers that miss the same source at once may both build it.
  std::shared_ptr<const Grammar> get(const GrammarSource& source);

  size_t size() const;
  // The symbols of the grammars held.
  size_t num_symbols() const;

 private:
  using Entry = std::pair<std::string, std::shared_ptr<const Grammar>>;

  size_t capacity_;
  size_t max_symbols_;
  Builder builder_;
  std::counting_semaphore<kMaxConcurrentBuilds> build_slots_;
  mutable std::mutex mutex_;
  std::list<Entry> entries_;  // most recently used first
  std::unordered_map<std::string, std::list<Entry>::iterator> by_key_;
  size_t num_symbols_ = 0;
};

}  // namespace sluice
