// Lexical diversity of a set of texts: distinct-n (Li et al., 2016), the number of distinct word
// n-grams divided by the number of all word n-grams, over the normalised words of every text
// (text_normalize.h; n-grams never cross from one text to the next). 1 when no n-gram repeats,
// near 0 when the texts say the same thing over and over.
#pragma once

#include <string>
#include <vector>

namespace sluice {

// Returns distinct-n of texts, 0 when they have no n-gram at all. Distinct n-grams are counted
// by a 64-bit hash of their words (a collision, at odds of about 1e-5 among 20 million n-grams,
// would undercount by one). Throws Error when n < 1.
double distinct_n(const std::vector<std::string>& texts, int n);

}  // namespace sluice
