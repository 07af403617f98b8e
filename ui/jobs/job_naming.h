// What the app calls new jobs, so a job can be found again by what it ran:
// "<instructions>__<model>__<yyyy-MM-dd_HHmm>.sluicejob" (e.g.
// "alpaca_5000__stories260K-f32__2026-11-26_1504.sluicejob") in the jobs folder (jobsDirectory(),
// app/jobs_directory.h, shared with `sluice jobs list`). Names use ASCII letters, digits, '.',
// '-' and '_' only.
#pragma once

#include <QDateTime>
#include <QString>

#include "app/jobs_directory.h"

namespace sluice::ui {

// The jobs folder (app/jobs_directory.h), under the name the app's code has always used.
using sluice::jobsDirectory;

// Returns text with every run of characters other than ASCII letters, digits, '.', '-' and '_'
// replaced by one '-', without leading or trailing '-' or '.', cut to maxChars; fallback when
// nothing is left.
QString safeFileNamePart(const QString& text, int maxChars, const QString& fallback);

// Returns what a model path is called in a job name: a directory's name, a file's name without
// its last extension.
QString modelNameOf(const QString& modelPath);

// Returns a path in directory for a new job over datasetPath with modelPath started at `when`,
// that names no existing file: "-2", "-3", ... is appended to the name when needed.
QString newJobPath(const QString& directory, const QString& datasetPath, const QString& modelPath,
                   const QDateTime& when);

}  // namespace sluice::ui
