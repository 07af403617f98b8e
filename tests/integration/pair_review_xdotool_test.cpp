// The Pairs tab reviewed by keys alone, end to end: a real n = 2 job from `sluice generate` (52
// rows) whose samples the test then scores as the judge step does (extra.score and extra.judge),
// the real `sluice gui --job J --tab pairs` on an Xvfb display, and `xdotool key` for every
// decision: 1, 2, T, D and Enter (the judge's verdict) in turn over rows 0-49, with an arrow
// back, an overruling 2 and Ctrl+Z (the undone decision restored) in the middle. Then the job
// file holds exactly the 50 decisions, and `sluice jobs export --format dpo --dpo-rule score`
// takes them: picks win, ties and discards are left out, rows 50-51 follow the judge. Built only
// with the GUI; a missing Xvfb or xdotool fails the test (scripts/install-deps.sh installs both).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "engine/jobs/job_store.h"
#include "engine/jobs/pair_pick_store.h"
#include "tests/integration/cli_test_util.h"

namespace sluice::test {
namespace {

using ::testing::HasSubstr;
using ReviewClock = std::chrono::steady_clock;

constexpr int kNumReviewRows = 52;
constexpr int kNumReviewed = 50;
// Row whose decision is overruled with 2 and then undone.
constexpr int kUndoneRow = 20;

bool is_installed_program(const std::string& path) {
  return ::access(path.c_str(), X_OK) == 0;
}

// An Xvfb server on the first free display from :90, ready once its socket exists.
class XvfbDisplay {
 public:
  XvfbDisplay() {
    for (int number = 90; number < 190; ++number) {
      if (std::filesystem::exists("/tmp/.X" + std::to_string(number) + "-lock") ||
          std::filesystem::exists("/tmp/.X11-unix/X" + std::to_string(number)))
        continue;
      process_ = std::make_unique<BackgroundProcess>(
          std::vector<std::string>{"/usr/bin/Xvfb", ":" + std::to_string(number), "-screen", "0",
                                   "1280x800x24", "-nolisten", "tcp"});
      const std::string socket = "/tmp/.X11-unix/X" + std::to_string(number);
      const auto deadline = ReviewClock::now() + std::chrono::seconds(20);
      while (ReviewClock::now() < deadline && process_->is_running() &&
             !std::filesystem::exists(socket))
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      if (process_->is_running() && std::filesystem::exists(socket)) {
        display_ = ":" + std::to_string(number);
        return;
      }
      process_.reset();  // taken meanwhile, or failed: the next number
    }
  }
  const std::string& display() const { return display_; }

 private:
  std::unique_ptr<BackgroundProcess> process_;
  std::string display_;
};

// Runs xdotool args on display, bounded by a timeout (search --sync waits for ever otherwise).
ProcessResult xdotool(const std::string& display, std::vector<std::string> args) {
  args.insert(args.begin(), {"/usr/bin/timeout", "60", "/usr/bin/xdotool"});
  return run_process(args, {"DISPLAY=" + display});
}

// The judge's scores this test gives row i's two samples (1-5, the mean of two ratings); rows
// 50 and 51 differ, so the export's score rule ranks them.
double judge_score(int row, int sample) {
  return sample == 0 ? 1.0 + (row * 7 % 9) * 0.5 : 1.0 + (row * 5 % 9) * 0.5;
}

// Scores the job's samples as the judge step writes them.
void write_judge_scores(const std::string& job) {
  const auto store = JobStore::open(job);
  for (int i = 0; i < kNumReviewRows; ++i) {
    auto row = store->result(i);
    ASSERT_TRUE(row && row->samples.size() == 2u) << "row " << i;
    for (int s = 0; s < 2; ++s) {
      const double score = judge_score(i, s);
      auto& extra = row->samples[static_cast<size_t>(s)].extra;
      extra["score"] = score;
      extra["judge"] = {{"rubric", "ultrafeedback"},
                        {"ratings", {score, score}},
                        {"rationales", {"Rated " + std::to_string(score), "Again"}}};
    }
    store->add_result(*row);
  }
  store->flush();
}

PairPick review_pick(int row, int chosen, int rejected, bool is_tie = false,
                     bool is_unusable = false) {
  PairPick pick;
  pick.row_index = row;
  pick.chosen_sample_idx = chosen;
  pick.rejected_sample_idx = rejected;
  pick.is_tie = is_tie;
  pick.is_unusable = is_unusable;
  return pick;
}

// The key reviewing row i, in turn 1, 2, T, D, Enter, and the decision it stores (Enter: the
// judge's verdict from the scores above; D: the row discarded, as X marks it).
const char* key_for(int row) {
  static const char* const kKeys[] = {"1", "2", "t", "d", "Return"};
  return kKeys[row % 5];
}

PairPick decision_for(int row) {
  switch (row % 5) {
    case 0:
      return review_pick(row, 0, 1);
    case 1:
      return review_pick(row, 1, 0);
    case 2:
      return review_pick(row, 0, 1, /*is_tie=*/true);
    case 3:
      return review_pick(row, 0, 1, false, /*is_unusable=*/true);
    default: {
      const double left = judge_score(row, 0);
      const double right = judge_score(row, 1);
      if (left == right) return review_pick(row, 0, 1, /*is_tie=*/true);
      return left > right ? review_pick(row, 0, 1) : review_pick(row, 1, 0);
    }
  }
}

TEST(PairReviewXdotool, ReviewsFiftyPairsByKeysAlone) {
  ASSERT_TRUE(is_installed_program("/usr/bin/Xvfb"))
      << "Xvfb is missing: run scripts/install-deps.sh";
  ASSERT_TRUE(is_installed_program("/usr/bin/xdotool"))
      << "xdotool is missing: run scripts/install-deps.sh";
  ASSERT_NE(run_sluice({"--version"}).out.find("gui: yes"), std::string::npos)
      << "sluice --version does not say \"gui: yes\"";

  const std::string dir = make_temp_dir("pair-review-xdotool");
  std::string input;
  for (int i = 0; i < kNumReviewRows; ++i)
    input += "{\"prompt\": \"Once upon a time, story " + std::to_string(i) + ",\"}\n";
  write_file(dir + "/input.jsonl", input);
  const std::string job = dir + "/review.sluicejob";
  const auto generated = run_sluice(
      {"generate", "--model", shared_path(kGgufF32), "--input", dir + "/input.jsonl", "--job", job,
       "--n", "2", "--temperature", "1.0", "--seed", "11", "--max-tokens", "12", "--quiet"});
  ASSERT_EQ(generated.exit_code, 0) << generated.err;
  write_judge_scores(job);

  XvfbDisplay x;
  ASSERT_FALSE(x.display().empty()) << "no Xvfb display could be started on :90-:189";
  const std::string home = dir + "/home";
  std::filesystem::create_directories(home + "/runtime");
  ::chmod((home + "/runtime").c_str(), 0700);
  // The app on the X display: its own settings (no last session), the job's Pairs tab shown.
  BackgroundProcess gui({"/usr/bin/env", "-u", "QT_QPA_PLATFORM", "DISPLAY=" + x.display(),
                         "XDG_CONFIG_HOME=" + home + "/config", "XDG_DATA_HOME=" + home + "/data",
                         "XDG_RUNTIME_DIR=" + home + "/runtime", SLUICE_EXECUTABLE, "gui", "--job",
                         job, "--tab", "pairs", "--palette", "light"});
  // Mapped: search --sync waits for the window; then it takes the keyboard (there is no window
  // manager to give it).
  const auto found =
      xdotool(x.display(), {"search", "--sync", "--onlyvisible", "--name", "^Sluice"});
  ASSERT_EQ(found.exit_code, 0) << found.err << (gui.is_running() ? "" : gui.wait().err);
  const std::string window = found.out.substr(0, found.out.find('\n'));
  ASSERT_EQ(xdotool(x.display(), {"windowfocus", "--sync", window}).exit_code, 0);

  const auto picks = PairPickStore::open(job);
  // Waits until the job file holds want for its row (the app stores a decision at once).
  const auto wait_for = [&](const std::optional<PairPick>& want, int row,
                            ReviewClock::duration limit) {
    const auto deadline = ReviewClock::now() + limit;
    for (;;) {
      const auto stored = picks->picks();
      const auto it = stored.find(row);
      const std::optional<PairPick> got =
          it != stored.end() ? std::optional<PairPick>(it->second) : std::nullopt;
      if (got == want) return true;
      if (ReviewClock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  };
  const auto press = [&](const std::string& key) {
    // To the focused window through XTEST, as a keyboard would (--window sends synthetic events).
    const auto r = xdotool(x.display(), {"key", key});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  };
  // Presses key until the job file holds want for row. A decision moves on to the next row, read
  // off the GUI thread; a decision key that arrives before that row shows is ignored (it would
  // decide the row being left), and nothing outside the window says when it shows. So a key
  // whose decision is not stored within a second is pressed again (a stored decision shows in
  // the file within milliseconds); the first row also waits for the tab to read the job.
  int num_pressed_again = 0;
  const auto press_until_stored = [&](const std::string& key, const PairPick& want) {
    for (int attempt = 0; attempt < 30; ++attempt) {
      num_pressed_again += attempt > 0 ? 1 : 0;
      press(key);
      if (wait_for(want, static_cast<int>(want.row_index), std::chrono::seconds(1))) return;
    }
    FAIL() << "row " << want.row_index << " never took key " << key << "\n"
           << (gui.is_running() ? "" : gui.wait().err);
  };

  for (int row = 0; row <= kUndoneRow && !HasFatalFailure(); ++row)
    press_until_stored(key_for(row), decision_for(row));
  ASSERT_FALSE(HasFatalFailure());
  // On row 21 now: an arrow back to row 20, overruled with 2 (on to row 21), Ctrl+Z (row 20's
  // decision restored and shown), an arrow on to row 21. Arrows are never ignored: they move on
  // from the row being read.
  press("Left");
  press_until_stored("2", review_pick(kUndoneRow, 1, 0));
  ASSERT_FALSE(HasFatalFailure());
  press("ctrl+z");
  ASSERT_TRUE(wait_for(decision_for(kUndoneRow), kUndoneRow, std::chrono::seconds(20)));
  press("Right");
  for (int row = kUndoneRow + 1; row < kNumReviewed && !HasFatalFailure(); ++row)
    press_until_stored(key_for(row), decision_for(row));
  ASSERT_FALSE(HasFatalFailure());

  // Keys pressed while the next row was still being read (the first row's included).
  std::cout << "decision keys pressed again: " << num_pressed_again << "\n";
  std::map<int64_t, PairPick> expected;
  for (int row = 0; row < kNumReviewed; ++row) expected[row] = decision_for(row);
  EXPECT_EQ(picks->picks(), expected);
  gui.kill_now();

  // The export: picks win, ties and discards are left out, rows 50 and 51 follow the judge.
  const auto store = JobStore::open(job);
  std::map<std::string, std::pair<std::string, std::string>> want;  // by prompt
  int num_pairs = 0;
  int num_ties = 0;
  int num_discarded = 0;
  for (int row = 0; row < kNumReviewRows; ++row) {
    const auto result = store->result(row);
    ASSERT_TRUE(result);
    const auto output = [&](int sample) {
      return result->samples[static_cast<size_t>(sample)].output;
    };
    if (row >= kNumReviewed) {
      if (output(0) == output(1)) continue;  // the rule gives no pair of identical outputs
      const bool left_wins = judge_score(row, 0) > judge_score(row, 1);
      want[result->prompt] =
          left_wins ? std::pair{output(0), output(1)} : std::pair{output(1), output(0)};
      continue;
    }
    const PairPick& pick = expected.at(row);
    if (pick.is_tie) {
      ++num_ties;
    } else if (pick.is_unusable) {
      ++num_discarded;
    } else {
      ++num_pairs;
      want[result->prompt] = {output(pick.chosen_sample_idx), output(pick.rejected_sample_idx)};
    }
  }
  ASSERT_EQ(num_pairs + num_ties + num_discarded, kNumReviewed);
  const std::string out = dir + "/pairs.jsonl";
  const auto exported = run_sluice(
      {"jobs", "export", job, "--format", "dpo", "--dpo-rule", "score", "--output", out});
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  EXPECT_THAT(exported.err, HasSubstr(std::to_string(num_pairs) + " pairs from review picks"));
  EXPECT_THAT(exported.err, HasSubstr(std::to_string(num_ties) + " marked a tie in review"));
  EXPECT_THAT(exported.err,
              HasSubstr(std::to_string(num_discarded) + " marked unusable in review"));
  const auto records = read_jsonl(out);
  std::map<std::string, std::pair<std::string, std::string>> got;
  for (const auto& record : records)
    got[record["prompt"].get<std::string>()] = {record["chosen"].get<std::string>(),
                                                record["rejected"].get<std::string>()};
  EXPECT_EQ(got, want);
}

}  // namespace
}  // namespace sluice::test
