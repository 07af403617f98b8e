// The Pairs tab tests' shared parts: a small job file written here (rows, samples, picks), and
// keys pressed as a person would. Each test program includes it once.
#pragma once

#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QElapsedTimer>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QStyle>
#include <QStyleFactory>
#include <QTabBar>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTextEdit>
#include <QToolButton>
#include <QtTest>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/generation_spec.h"
#include "engine/core/error.h"
#include "engine/export/exporters.h"
#include "engine/jobs/job_store.h"
#include "engine/jobs/job_table.h"
#include "engine/jobs/pair_pick_store.h"
#include "tests/gui/gui_shots.h"
#include "tests/gui/locked_job_file.h"
#include "tests/support/test_paths.h"
#include "ui/common/reasoning_fold.h"
#include "ui/pairs/pair_colors.h"
#include "ui/pairs/pair_review_view.h"
#include "ui/pairs/word_diff.h"
#include "ui/results/export_dialog.h"
#include "ui/window/app_palette.h"
#include "ui/window/main_window.h"

using sluice::JobInfo;
using sluice::JobStore;
using sluice::PairPick;
using sluice::PairPickStore;
using sluice::RowResult;
using sluice::RowStatus;
using sluice::SampleResult;
using sluice::ui::PairReviewView;
using sluice::ui::ReasoningFold;
using sluice::ui::WordSpan;

namespace {

inline SampleResult sample(const std::string& output) {
  SampleResult result;
  result.output = output;
  result.output_tokens = 3;
  result.finish_reason = "stop";
  return result;
}

// Rows 0..4 are done with samples "row i first", "row i second longer", "row i third"; row 2 has
// failed (no samples), so the view walks rows 0, 1, 3, 4.
// isNested: n under "sampling", as generate and the app store it; else at the top, as older
// and hand-built jobs do. isAppJob: the whole spec as the app stores it (the window opens only
// those), over the shared Alpaca file and stories260K.
inline std::string writeJob(const QString& dir, int n, bool isNested = false,
                            bool isAppJob = false) {
  JobInfo info;
  info.source_path = "/data/in.jsonl";
  info.source_format = "jsonl";
  info.model_path = "/m.bin";
  if (isAppJob) {
    sluice::GenerationSpec spec;
    spec.input_path = sluice::test::shared_path("datasets/en/alpaca_5000.json");
    spec.model_path = sluice::test::shared_path("models/stories260K/gguf/stories260K-f32.gguf");
    spec.sampling.n = n;
    info.source_path = spec.input_path;
    info.model_path = spec.model_path;
    info.params = sluice::spec_to_json(spec);
  } else if (isNested) {
    info.params["sampling"]["n"] = n;
  } else {
    info.params["n"] = n;
  }
  const std::string path = (dir + "/pairs.sluicejob").toStdString();
  auto store = JobStore::create(path, info);
  for (int64_t i = 0; i < 5; ++i) {
    RowResult row;
    row.row_index = i;
    row.line = static_cast<size_t>(i) + 1;
    row.prompt = "prompt " + std::to_string(i);
    if (i == 2) {
      row.status = RowStatus::Failed;
      row.error = "too long";
    } else {
      const std::string tag = "row " + std::to_string(i);
      row.samples = {sample(tag + " first"), sample(tag + " second longer")};
      if (n > 2) row.samples.push_back(sample(tag + " third"));
    }
    store->add_result(row);
  }
  store->flush();
  return path;
}

inline SampleResult thinkingSample(const std::string& reasoning, int reasoningTokens,
                                   const std::string& answer) {
  SampleResult result = sample(answer);
  result.reasoning = reasoning;
  result.reasoning_tokens = reasoningTokens;
  result.output_tokens = reasoningTokens + 5;
  return result;
}

// A thinking model's job, n = 2: rows 0 and 1 reasoned on both samples, row 2 answered at once.
inline std::string writeThinkingJob(const QString& dir) {
  JobInfo info;
  info.source_path = "/data/in.jsonl";
  info.source_format = "jsonl";
  info.model_path = "/qwen3.gguf";
  info.params["sampling"]["n"] = 2;
  const std::string path = (dir + "/thinking.sluicejob").toStdString();
  auto store = JobStore::create(path, info);
  for (int64_t i = 0; i < 3; ++i) {
    RowResult row;
    row.row_index = i;
    row.line = static_cast<size_t>(i) + 1;
    row.prompt = "Is " + std::to_string(91 + i) + " a prime number? Answer yes or no.";
    if (i < 2) {
      row.samples = {thinkingSample("91 = 7 × 13, so it has divisors besides 1 and itself.", 21,
                                    "No: 91 = 7 × 13."),
                     thinkingSample("It is odd, not divisible by 3 or 5. I think it is prime.", 19,
                                    "Yes, 91 is prime.")};
    } else {
      row.samples = {sample("no"), sample("yes")};
    }
    store->add_result(row);
  }
  store->flush();
  return path;
}

// A sample as the judge step leaves it: extra {"score", "judge": {rubric, ratings, rationales}}
// (no score: not judged). Ratings rubric: k = 2 ratings whose mean is the score (4.5 -> 4, 5);
// pairwise: one comparison.
inline SampleResult judgedSample(const std::string& output, std::optional<double> score,
                                 const std::string& rubric, const std::string& rationale) {
  SampleResult result = sample(output);
  if (!score) return result;
  result.extra["score"] = *score;
  auto& judge = result.extra["judge"];
  judge["rubric"] = rubric;
  if (rubric == "pairwise") {
    judge["ratings"] = {*score};
    judge["rationales"] = {rationale};
  } else {
    const double low = std::floor(*score);
    judge["ratings"] = {low, 2 * *score - low};
    judge["rationales"] = {rationale, "Second look: " + rationale};
  }
  return result;
}

// A judged job: row i has one sample per entry of scores[i] ("row i sample j"), each scored so
// (nullopt: not judged) by rubric; n is the first row's sample count. With isAppJob the spec is
// the app's (as writeJob's), so the window opens it.
inline std::string writeJudgedJob(const QString& dir,
                                  const std::vector<std::vector<std::optional<double>>>& scores,
                                  const std::string& rubric = "ultrafeedback") {
  JobInfo info;
  info.source_path = "/data/in.jsonl";
  info.source_format = "jsonl";
  info.model_path = "/m.bin";
  info.params["sampling"]["n"] = scores.empty() ? 2 : static_cast<int>(scores[0].size());
  const std::string path = (dir + "/judged.sluicejob").toStdString();
  auto store = JobStore::create(path, info);
  for (size_t i = 0; i < scores.size(); ++i) {
    RowResult row;
    row.row_index = static_cast<int64_t>(i);
    row.line = i + 1;
    row.prompt = "Explain prompt " + std::to_string(i) + " to a child.";
    for (size_t j = 0; j < scores[i].size(); ++j) {
      const std::string tag = "row " + std::to_string(i) + " sample " + std::to_string(j);
      row.samples.push_back(judgedSample(tag, scores[i][j], rubric, "The rationale for " + tag));
    }
    store->add_result(row);
  }
  store->flush();
  return path;
}

inline PairPick pickOf(int64_t row, int chosen, int rejected, bool isUnusable = false) {
  PairPick pick;
  pick.row_index = row;
  pick.chosen_sample_idx = chosen;
  pick.rejected_sample_idx = rejected;
  pick.is_unusable = isUnusable;
  return pick;
}

inline PairPick tieOf(int64_t row, int left, int right) {
  PairPick pick = pickOf(row, left, right);
  pick.is_tie = true;
  return pick;
}

// Waits until the view's reads and writes (on its pool) have come back.
#define SETTLE(view) QTRY_VERIFY_WITH_TIMEOUT(!(view).isBusy(), 10000)

// Presses key as a person would: to the focused widget of the shown, active window (wherever the
// focus is); then waits for what the view read or wrote.
inline void press(PairReviewView& view, Qt::Key key,
                  Qt::KeyboardModifiers modifiers = Qt::NoModifier) {
  QWidget* target = QApplication::focusWidget() ? QApplication::focusWidget() : &view;
  QTest::keyClick(target, key, modifiers);
  SETTLE(view);
}

inline void undoKey(PairReviewView& view) {
  press(view, Qt::Key_Z, Qt::ControlModifier);
}

// Shows view in an active window and puts the focus on one of its texts, as after a click.
inline bool showFocused(PairReviewView& view) {
  view.resize(900, 600);
  view.show();
  view.activateWindow();
  if (!QTest::qWaitForWindowActive(&view)) return false;
  view.leftText()->setFocus();
  return true;
}

// The angle between two colours' hues, 0..180 degrees.
inline int hueDistance(const QColor& a, const QColor& b) {
  const int d = std::abs(a.hslHue() - b.hslHue()) % 360;
  return std::min(d, 360 - d);
}

}  // namespace
