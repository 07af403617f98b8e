// Before a run starts: how many prompts (of those the Instructions panel counted) do not fit the
// model's context, and what to do with them. Such rows would fail; the person chooses to
// truncate them (they keep the end of the prompt, see LongPromptPolicy), skip them, or let them
// fail, or not to start yet.
#pragma once

#include <QVector>
#include <functional>
#include <optional>

#include "app/generation_spec.h"

class QWidget;

namespace sluice::ui {

// Returns how many prompt lengths (tokens) reach maxModelLen, so the engine would refuse them.
int countPromptsTooLong(const QVector<int>& promptLengths, int maxModelLen);

// Asks (window-modal, not blocking) what to do with numTooLong of numCounted prompts that do not
// fit maxModelLen tokens; calls done with the choice, or with nothing when the person does not
// start. The box is named "longPrompts" (for tests).
void askAboutLongPrompts(QWidget* parent, int numTooLong, int numCounted, int maxModelLen,
                         std::function<void(std::optional<sluice::LongPromptPolicy>)> done);

}  // namespace sluice::ui
