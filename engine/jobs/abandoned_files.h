// Files a killed process leaves behind: a job's "<path>.creating-<pid>" (JobStore::create) and an
// export's "<path>.partial-<pid>" (ExportOutput). Both are named after the process writing them,
// so the next writer to the same path can tell an abandoned one (its process is gone) from one
// that another process is writing right now, and removes only the former.
#pragma once

#include <string>

namespace sluice {

// Removes every "<path><infix><pid>" file beside path whose process is not running (a pid that
// is running, or that this process may not signal, is left alone: it may be writing). Returns
// the number removed. Errors are ignored: a leftover is untidy, never a reason to fail.
int remove_abandoned_files(const std::string& path, const std::string& infix);

// Returns true when a process with this pid exists (this one included).
bool is_process_running(long pid);

}  // namespace sluice
