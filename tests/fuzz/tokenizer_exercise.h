// What a loaded tokenizer is then asked to do: encode texts (special tokens on and off,
// invalid UTF-8 included) and decode ids. Encoding throws nothing but an Error naming the file
// (the Tokenizer contract), every id it returns is inside the vocabulary, and decoding any id in
// or out of range is safe.
#pragma once

#include <string>

#include "engine/tokenizer/tokenizer.h"

namespace sluice::fuzz {

// Runs the tokenizer over fixed texts and over a text made of its own pieces; aborts when a
// property above breaks.
void exercise_tokenizer(const Tokenizer& tokenizer, const std::string& path);

}  // namespace sluice::fuzz
