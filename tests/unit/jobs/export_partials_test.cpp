// Issue 27: an export killed with -9 left "<out>.partial-<pid>" beside its destination for ever.
// The next export to the same place removes such files of processes that are gone, and leaves
// those of running processes (another export may be writing one right now) and of other paths.
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>

#include "engine/export/export_output.h"
#include "engine/jobs/abandoned_files.h"
#include "tests/support/test_paths.h"

namespace sluice {
namespace {

// Returns the pid of a process that has ended (and been reaped): what a killed export's pid is.
pid_t ended_process_pid() {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return pid;
}

TEST(ExportPartials, TheNextExportRemovesAKilledExportsPartialFileOnly) {
  namespace fs = std::filesystem;
  const std::string dir = test::make_temp_dir("export-partials");
  const std::string out = dir + "/out.jsonl";
  const pid_t dead = ended_process_pid();
  ASSERT_FALSE(is_process_running(dead));
  const std::string killed = out + ".partial-" + std::to_string(dead);
  const std::string running = out + ".partial-1";  // pid 1 always runs: another export's
  const std::string other_path = dir + "/other.jsonl.partial-" + std::to_string(dead);
  const std::string not_a_pid = out + ".partial-notes";
  for (const std::string& path : {killed, running, other_path, not_a_pid})
    test::write_file(path, "{\"half\": ");

  ExportOutput output(out);
  output.write("{}\n");
  output.commit();

  EXPECT_EQ(test::read_file(out), "{}\n");
  EXPECT_FALSE(fs::exists(killed)) << "a killed export's partial file is still there";
  EXPECT_TRUE(fs::exists(running)) << "a running process's partial file was removed";
  EXPECT_TRUE(fs::exists(other_path)) << "another destination's partial file was removed";
  EXPECT_TRUE(fs::exists(not_a_pid));
}

TEST(ExportPartials, OnlyEndedProcessesFilesGo) {
  const std::string dir = test::make_temp_dir("abandoned-files");
  const std::string path = dir + "/job.sluicejob";
  const pid_t dead = ended_process_pid();
  test::write_file(path + ".creating-" + std::to_string(dead), "");
  test::write_file(path + ".creating-" + std::to_string(::getpid()), "");
  EXPECT_EQ(remove_abandoned_files(path, ".creating-"), 1);
  EXPECT_TRUE(std::filesystem::exists(path + ".creating-" + std::to_string(::getpid())));
}

}  // namespace
}  // namespace sluice
