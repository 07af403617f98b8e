// `sluice jobs compare` on two real jobs over one file (stories260K at two settings): the printed
// statistics against counts worked out here from the jobs' JSONL exports; jobs over different
// files are refused naming both. And `sluice jobs list` with no folder lists the app's jobs
// folder (under a temporary HOME), not the current directory.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>

#include "tests/integration/cli_test_util.h"

namespace sluice::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

ProcessResult make_job(const std::string& input, const std::string& job,
                       std::vector<std::string> settings) {
  std::vector<std::string> args = {
      "generate", "--model", shared_path(kGgufF32), "--input", input, "--limit", "6", "--job",
      job,        "--quiet"};
  args.insert(args.end(), settings.begin(), settings.end());
  return run_sluice(args);
}

std::vector<nlohmann::json> exported_rows(const std::string& job) {
  const std::string out = job + ".jsonl";
  const auto r =
      run_sluice({"jobs", "export", job, "--format", "jsonl", "--include-failed", "--output", out});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return read_jsonl(out);
}

std::string one_decimal(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", value);
  return text;
}

// The numbers `jobs compare` prints for one job, from its export.
struct ExportedStats {
  int done = 0;
  double mean_tokens = 0.0;
  double median_tokens = 0.0;
  std::map<std::string, int> finish_reasons;
};

ExportedStats stats_of(const std::vector<nlohmann::json>& rows) {
  ExportedStats stats;
  std::vector<int> tokens;
  for (const auto& row : rows) {
    ++stats.finish_reasons[row["finish_reason"].get<std::string>()];
    if (row["status"] != "done") continue;
    ++stats.done;
    tokens.push_back(row["output_tokens"].get<int>());
  }
  std::sort(tokens.begin(), tokens.end());
  for (const int t : tokens) stats.mean_tokens += t;
  stats.mean_tokens /= static_cast<double>(tokens.size());
  const size_t mid = tokens.size() / 2;
  stats.median_tokens =
      tokens.size() % 2 == 1 ? tokens[mid] : (tokens[mid - 1] + tokens[mid]) / 2.0;
  return stats;
}

TEST(JobsCompareCli, PrintsEachJobsStatisticsAndTheRowsThatDiffer) {
  const std::string dir = make_temp_dir("jobs-compare");
  const std::string input = shared_path("datasets/en/alpaca_5000.json");
  ASSERT_EQ(
      make_job(input, dir + "/a.sluicejob", {"--max-tokens", "8", "--temperature", "0"}).exit_code,
      0);
  ASSERT_EQ(make_job(input, dir + "/b.sluicejob",
                     {"--max-tokens", "40", "--temperature", "1", "--seed", "7"})
                .exit_code,
            0);

  const auto r =
      run_sluice({"jobs", "compare", dir + "/a.sluicejob", dir + "/b.sluicejob", "--rows", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto rows_a = exported_rows(dir + "/a.sluicejob");
  const auto rows_b = exported_rows(dir + "/b.sluicejob");
  ASSERT_EQ(rows_a.size(), 6u);
  ASSERT_EQ(rows_b.size(), 6u);
  int num_differing = 0;
  for (size_t i = 0; i < rows_a.size(); ++i)
    num_differing += rows_a[i]["output"] != rows_b[i]["output"] ? 1 : 0;
  ExportedStats a = stats_of(rows_a);
  ExportedStats b = stats_of(rows_b);

  const auto line_of = [&r](const std::string& label) {
    const size_t at = r.out.find("\n" + label + " ");
    EXPECT_NE(at, std::string::npos) << label << " missing from:\n" << r.out;
    if (at == std::string::npos) return std::vector<std::string>{};
    std::string line = r.out.substr(at + 1, r.out.find('\n', at + 1) - at - 1);
    line = line.substr(label.size());
    std::vector<std::string> words;  // the values after the label, split on runs of spaces
    size_t start = line.find_first_not_of(' ');
    while (start != std::string::npos) {
      const size_t end = line.find(' ', start);
      words.push_back(line.substr(start, end - start));
      start = end == std::string::npos ? end : line.find_first_not_of(' ', end);
    }
    return words;
  };
  EXPECT_EQ(line_of("rows"), (std::vector<std::string>{"6", "6"}));
  EXPECT_EQ(line_of("done"),
            (std::vector<std::string>{std::to_string(a.done), std::to_string(b.done)}));
  EXPECT_EQ(line_of("output length, mean"),
            (std::vector<std::string>{one_decimal(a.mean_tokens), "tokens",
                                      one_decimal(b.mean_tokens), "tokens"}));
  EXPECT_EQ(line_of("output length, median"),
            (std::vector<std::string>{one_decimal(a.median_tokens), "tokens",
                                      one_decimal(b.median_tokens), "tokens"}));
  std::map<std::string, int> reasons = a.finish_reasons;
  reasons.insert(b.finish_reasons.begin(), b.finish_reasons.end());
  for (const auto& [reason, count] : reasons) {
    EXPECT_EQ(line_of("finish " + reason),
              (std::vector<std::string>{std::to_string(a.finish_reasons[reason]),
                                        std::to_string(b.finish_reasons[reason])}));
  }
  EXPECT_THAT(r.out, HasSubstr("6 rows in both, " + std::to_string(num_differing) + " differ"));
  // --rows 2: the first two differing rows, each with both outputs' first words.
  ASSERT_GE(num_differing, 2);
  int shown = 0;
  for (size_t i = 0; i < rows_a.size() && shown < 2; ++i) {
    if (rows_a[i]["output"] == rows_b[i]["output"]) continue;
    ++shown;
    EXPECT_THAT(r.out, HasSubstr("row " + std::to_string(i) + ": "));
    EXPECT_THAT(r.out, HasSubstr(rows_a[i]["output"].get<std::string>().substr(0, 8)));
    EXPECT_THAT(r.out, HasSubstr(rows_b[i]["output"].get<std::string>().substr(0, 8)));
  }
}

TEST(JobsCompareCli, RefusesJobsOverDifferentFilesNamingBoth) {
  const std::string dir = make_temp_dir("jobs-compare-refused");
  write_file(dir + "/one.jsonl", "{\"prompt\": \"Once\"}\n");
  write_file(dir + "/two.jsonl", "{\"prompt\": \"Twice\"}\n");
  ASSERT_EQ(make_job(dir + "/one.jsonl", dir + "/a.sluicejob", {"--max-tokens", "4"}).exit_code, 0);
  ASSERT_EQ(make_job(dir + "/two.jsonl", dir + "/b.sluicejob", {"--max-tokens", "4"}).exit_code, 0);
  const auto r = run_sluice({"jobs", "compare", dir + "/a.sluicejob", dir + "/b.sluicejob"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("different input files"));
  EXPECT_THAT(r.err, HasSubstr("one.jsonl"));
  EXPECT_THAT(r.err, HasSubstr("two.jsonl"));
  EXPECT_EQ(run_sluice({"jobs", "compare", dir + "/a.sluicejob"}).exit_code, 2);
  EXPECT_EQ(
      run_sluice({"jobs", "compare", dir + "/a.sluicejob", dir + "/a.sluicejob", "--rows", "x"})
          .exit_code,
      2);
}

// Runs `sluice args...` in the folder home with HOME (and the XDG folders) under it, as a user
// whose documents folder is there.
ProcessResult run_sluice_at_home(const std::string& home, std::vector<std::string> args) {
  std::vector<std::string> argv = {"/usr/bin/env",
                                   "-C",
                                   home,
                                   "HOME=" + home,
                                   "XDG_CONFIG_HOME=" + home + "/.config",
                                   "XDG_DATA_HOME=" + home + "/.local/share",
                                   SLUICE_EXECUTABLE};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_process(argv, {"QT_QPA_PLATFORM=offscreen"});
}

TEST(JobsListCli, WithoutAFolderListsTheAppsJobsFolder) {
  const std::string home = make_temp_dir("jobs-list-home");
  const auto before = run_sluice_at_home(home, {"jobs", "list"});
  EXPECT_EQ(before.exit_code, 0) << before.err;
  EXPECT_THAT(before.out, HasSubstr(home + "/Documents/Sluice Jobs"));
  EXPECT_THAT(before.out, HasSubstr("does not exist yet"));

  const std::string folder = home + "/Documents/Sluice Jobs";
  std::filesystem::create_directories(folder);
  write_file(home + "/in.jsonl", "{\"prompt\": \"Once\"}\n");
  ASSERT_EQ(
      make_job(home + "/in.jsonl", folder + "/story__stories260K.sluicejob", {"--max-tokens", "4"})
          .exit_code,
      0);
  const auto listed = run_sluice_at_home(home, {"jobs", "list"});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_THAT(listed.out, HasSubstr(folder + "/story__stories260K.sluicejob"));
  EXPECT_THAT(listed.out, HasSubstr("1 done"));
  EXPECT_THAT(listed.err, HasSubstr("jobs folder"));

  // A documents folder set in user-dirs.dirs (as the app's QStandardPaths reads it) is followed.
  std::filesystem::create_directories(home + "/.config");
  write_file(home + "/.config/user-dirs.dirs", "XDG_DOCUMENTS_DIR=\"$HOME/Dokumente\"\n");
  std::filesystem::create_directories(home + "/Dokumente/Sluice Jobs");
  std::filesystem::rename(folder + "/story__stories260K.sluicejob",
                          home + "/Dokumente/Sluice Jobs/moved.sluicejob");
  const auto moved = run_sluice_at_home(home, {"jobs", "list"});
  ASSERT_EQ(moved.exit_code, 0) << moved.err;
  EXPECT_THAT(moved.out, HasSubstr(home + "/Dokumente/Sluice Jobs/moved.sluicejob"));

  // `jobs list .` lists the current folder, and only `jobs list .` does.
  ASSERT_EQ(make_job(home + "/in.jsonl", home + "/here.sluicejob", {"--max-tokens", "4"}).exit_code,
            0);
  EXPECT_THAT(run_sluice_at_home(home, {"jobs", "list", "."}).out, HasSubstr("here.sluicejob"));
  EXPECT_THAT(run_sluice_at_home(home, {"jobs", "list"}).out, Not(HasSubstr("here.sluicejob")));

  // `jobs list DIR` still lists DIR.
  const auto explicit_dir =
      run_sluice_at_home(home, {"jobs", "list", home + "/Dokumente/Sluice Jobs"});
  EXPECT_THAT(explicit_dir.out, HasSubstr("moved.sluicejob"));
  EXPECT_THAT(explicit_dir.err, Not(HasSubstr("jobs folder")));
}

}  // namespace
}  // namespace sluice::test
