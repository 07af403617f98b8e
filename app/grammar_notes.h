// The notes of a job's compiled grammars (Grammar::notes(): keywords a compile ignored or, in
// best-effort mode, dropped) as "<source name>: <note>" lines, taken once per distinct grammar:
// a schema that a million rows share is noted once, named after the first row that had it.
// Bounded: past kMaxJobGrammarNotes lines the rest are only counted.
#pragma once

#include <cstddef>
#include <string>
#include <unordered_set>
#include <vector>

#include "engine/grammar/grammar_source.h"

namespace sluice {

class GrammarNotes {
 public:
  // Takes source's notes unless a source with the same grammar was taken before; returns the
  // lines kept from them (none when it was, when it has none, or when the bound is reached).
  std::vector<std::string> add(const GrammarSource& source, const std::vector<std::string>& notes);

  // The lines kept, in the order they came.
  const std::vector<std::string>& lines() const { return lines_; }
  // Lines left out past the bound.
  size_t num_left_out() const { return num_left_out_; }

 private:
  // sha256 of each noted source's grammar_source_key: only sources with notes are remembered, so
  // a job of distinct plain schemas costs nothing here.
  std::unordered_set<std::string> noted_;
  std::vector<std::string> lines_;
  size_t num_left_out_ = 0;
};

// Returns the lines of one grammar's notes, "<source_name>: <note>", at most max_lines of them
// and then "... and N more" (for logs, where each grammar is noted on its own).
std::vector<std::string> grammar_note_lines(const std::string& source_name,
                                            const std::vector<std::string>& notes,
                                            size_t max_lines);

}  // namespace sluice
