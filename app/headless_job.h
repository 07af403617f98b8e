// `sluice gui` without a display (or in a build without the GUI): runs the preloaded job in this
// process and prints every result row to stdout as it finishes.
#pragma once

#include <QStringList>

namespace sluice {

// args: the arguments after `gui` (--model, --dataset, --start, --quit-when-done). Returns the
// exit code: 0 done, 3 some rows failed, 1 the job failed, 2 usage.
int run_headless_job(const QStringList& args);

}  // namespace sluice
