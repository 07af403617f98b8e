// Range tables behind unicode.h's category lookups, generated into unicode_tables.cpp by
// scripts/gen_unicode_tables.py. Only unicode.cpp reads them.
#pragma once

#include <cstddef>
#include <cstdint>

namespace sluice::unicode_tables {

// (first codepoint << 8) | UnicodeCategory, sorted; each run lasts until the next one starts.
extern const uint32_t kCategoryRuns[];
extern const size_t kNumCategoryRuns;

// Inclusive [first, last] ranges of the White_Space property, sorted.
extern const char32_t kWhiteSpaceRanges[][2];
extern const size_t kNumWhiteSpaceRanges;

}  // namespace sluice::unicode_tables
