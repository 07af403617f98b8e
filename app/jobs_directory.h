// Where the app saves new jobs: a visible "Sluice Jobs" folder under the user's documents. Here in
// app/ (Qt Core only) so that the desktop app and `sluice jobs list` agree on one folder.
#pragma once

#include <QString>

namespace sluice {

// Returns "<Documents>/Sluice Jobs" (QStandardPaths' documents folder: XDG_DOCUMENTS_DIR of
// user-dirs.dirs, else $HOME/Documents on Linux; the home folder when there is none). Under the
// test-mode data folder while QStandardPaths::isTestModeEnabled(), so tests leave the user's
// documents alone. Not created.
QString jobsDirectory();

}  // namespace sluice
