#include "app/grammar_notes.h"

#include "engine/core/error.h"
#include "engine/core/sha256.h"
#include "engine/jobs/job_info.h"

namespace sluice {

std::vector<std::string> GrammarNotes::add(const GrammarSource& source,
                                           const std::vector<std::string>& notes) {
  if (notes.empty()) return {};
  if (!noted_.insert(sha256_hex(grammar_source_key(source))).second) return {};
  std::vector<std::string> kept;
  for (const std::string& note : notes) {
    if (lines_.size() >= kMaxJobGrammarNotes) {
      ++num_left_out_;
      continue;
    }
    lines_.push_back(str_cat(source.name, ": ", note));
    kept.push_back(lines_.back());
  }
  return kept;
}

std::vector<std::string> grammar_note_lines(const std::string& source_name,
                                            const std::vector<std::string>& notes,
                                            size_t max_lines) {
  std::vector<std::string> lines;
  for (size_t i = 0; i < notes.size() && i < max_lines; ++i)
    lines.push_back(str_cat(source_name, ": ", notes[i]));
  if (notes.size() > max_lines)
    lines.push_back(str_cat("... and ", notes.size() - max_lines, " more"));
  return lines;
}

}  // namespace sluice
