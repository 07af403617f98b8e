// One row of an instruction file as the readers hand it over: its stable index (the job's key),
// where it starts in the file, its fields, and for chat formats the conversation to continue.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>

#include "engine/core/chat_message.h"

namespace sluice {

struct DatasetRow {
  // 0-based position among all rows of the file, bad rows included, so that it names the same
  // row in every run over the same file (jobs key their results by it).
  int64_t row_index = 0;
  size_t line = 0;                  // 1-based line where the row starts (JSON arrays: element index + 1)
  nlohmann::ordered_json fields;    // a JSON object: column or key -> value (CSV/TSV/text: strings)
  // Chat formats (ShareGPT, OpenAI messages): the conversation up to and including its last
  // non-assistant turn; trailing assistant turns (reference answers) stay only in `fields`.
  Conversation messages;
};

}  // namespace sluice
