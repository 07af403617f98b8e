// What a set of generation parameters changes from a fresh launch's: the phrases a person reads
// when the app says what it restored from the last session ("n = 2", "temperature 0.9",
// "max tokens 128", "JSON Schema", "remote servers http://gpu1:8000/v1").
#pragma once

#include <QStringList>

#include "app/generation_spec.h"

namespace sluice::ui {

// Returns each setting the parameters panel shows whose value in spec differs from
// GenerationSpec's defaults (what a launch without a last session shows), in the panel's order:
// sampling, structured output, device and engine, remote servers. Empty when spec is the
// defaults.
QStringList describeChangedSettings(const sluice::GenerationSpec& spec);

}  // namespace sluice::ui
