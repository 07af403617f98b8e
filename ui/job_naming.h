// Where the app keeps new jobs and what it calls them, so a job can be found again by what it
// ran: "<instructions>__<model>__<yyyy-MM-dd_HHmm>.sluicejob" (e.g.
// "alpaca_5000__stories260K-f32__2026-11-26_1504.sluicejob") in a visible "Sluice Jobs" folder
// under the user's documents. Names use ASCII letters, digits, '.', '-' and '_' only.
#pragma once

#include <QDateTime>
#include <QString>

namespace sluice::ui {

// Returns "<Documents>/Sluice Jobs" (under the test-mode data folder while
// QStandardPaths::isTestModeEnabled(), so tests leave the user's documents alone). Not created.
QString jobsDirectory();

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
