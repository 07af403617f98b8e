// The Pairs tab over a small job file written here: keys 1 / 2 / X / J / K, the picks stored in the
// job (read back through a fresh PairPickStore, as after a restart) and fed to the DPO export,
// comparing other samples when n > 2, a thinking model's reasoning shown on request above the
// answers compared, and the word diff's marks. Expected values come from the rows this test wrote.
#include <QApplication>
#include <QElapsedTimer>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QTemporaryDir>
#include <QTextEdit>
#include <QToolButton>
#include <QtTest>
#include <map>
#include <memory>
#include <string>

#include "engine/core/error.h"
#include "engine/export/exporters.h"
#include "engine/jobs/job_store.h"
#include "engine/jobs/job_table.h"
#include "engine/jobs/pair_pick_store.h"
#include "tests/gui/gui_shots.h"
#include "tests/gui/locked_job_file.h"
#include "ui/common/reasoning_fold.h"
#include "ui/pairs/pair_review_view.h"
#include "ui/pairs/word_diff.h"

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

SampleResult sample(const std::string& output) {
  SampleResult result;
  result.output = output;
  result.output_tokens = 3;
  result.finish_reason = "stop";
  return result;
}

// Rows 0..4 are done with samples "row i first", "row i second longer", "row i third"; row 2 has
// failed (no samples), so the view walks rows 0, 1, 3, 4.
// isNested: n under "sampling", as generate and the app store it; else at the top, as older
// and hand-built jobs do.
std::string writeJob(const QString& dir, int n, bool isNested = false) {
  JobInfo info;
  info.source_path = "/data/in.jsonl";
  info.source_format = "jsonl";
  info.model_path = "/m.bin";
  if (isNested) {
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

SampleResult thinkingSample(const std::string& reasoning, int reasoningTokens,
                            const std::string& answer) {
  SampleResult result = sample(answer);
  result.reasoning = reasoning;
  result.reasoning_tokens = reasoningTokens;
  result.output_tokens = reasoningTokens + 5;
  return result;
}

// A thinking model's job, n = 2: rows 0 and 1 reasoned on both samples, row 2 answered at once.
std::string writeThinkingJob(const QString& dir) {
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

PairPick pickOf(int64_t row, int chosen, int rejected, bool isUnusable = false) {
  PairPick pick;
  pick.row_index = row;
  pick.chosen_sample_idx = chosen;
  pick.rejected_sample_idx = rejected;
  pick.is_unusable = isUnusable;
  return pick;
}

// Waits until the view's reads and writes (on its pool) have come back.
#define SETTLE(view) QTRY_VERIFY_WITH_TIMEOUT(!(view).isBusy(), 10000)

// Presses key as a person would: to the focused widget inside the shown, active view; then waits
// for what it read or wrote.
void press(PairReviewView& view, Qt::Key key) {
  QWidget* target = QApplication::focusWidget() ? QApplication::focusWidget() : &view;
  QTest::keyClick(target, key);
  SETTLE(view);
}

}  // namespace

class PairReviewTest : public QObject {
  Q_OBJECT

 private slots:
  void keysPickMoveAndMarkRows();
  void picksSurviveAReopenAndFeedTheDpoExport();
  void comparesTheChosenTwoOfNSamples();
  void jobWithOneSampleSaysWhy();
  void aLockedJobDoesNotBlockTheGuiThread();
  void wordDiffMarksOnlyTheChangedWords();
  void reasoningIsOneClickAwayFromTheAnswers();
};

void PairReviewTest::keysPickMoveAndMarkRows() {
  QTemporaryDir dir;
  const std::string path = writeJob(dir.path(), 2);
  PairReviewView view;
  view.resize(900, 600);
  view.setJobPath(QString::fromStdString(path));
  SETTLE(view);
  view.show();
  view.activateWindow();
  QVERIFY(QTest::qWaitForWindowActive(&view));
  view.leftText()->setFocus();  // focus inside the view, on a read-only text as after a click

  QCOMPARE(view.numRows(), 4);
  QCOMPARE(view.currentRowIndex(), 0);
  QCOMPARE(view.leftText()->toPlainText(), QString("row 0 first"));
  QCOMPARE(view.rightText()->toPlainText(), QString("row 0 second longer"));
  QVERIFY(!view.currentPick());

  press(view, Qt::Key_1);  // left chosen
  QCOMPARE(view.currentPick(), pickOf(0, 0, 1));
  QVERIFY2(view.statusText().contains("sample 1 chosen, sample 2 rejected"),
           qPrintable(view.statusText()));
  press(view, Qt::Key_J);
  QCOMPARE(view.currentRowIndex(), 1);
  press(view, Qt::Key_2);  // right chosen
  QCOMPARE(view.currentPick(), pickOf(1, 1, 0));
  press(view, Qt::Key_J);  // skips the failed row 2
  QCOMPARE(view.currentRowIndex(), 3);
  press(view, Qt::Key_X);
  QVERIFY(view.currentPick() && view.currentPick()->is_unusable);
  QVERIFY2(view.statusText().contains("unusable"), qPrintable(view.statusText()));
  QVERIFY2(view.statusText().contains("3 of 4 rows reviewed"), qPrintable(view.statusText()));
  press(view, Qt::Key_J);
  QCOMPARE(view.currentRowIndex(), 4);
  press(view, Qt::Key_J);  // the last row: stays
  QCOMPARE(view.currentRowIndex(), 4);
  QVERIFY(!view.currentPick());
  press(view, Qt::Key_K);
  press(view, Qt::Key_K);
  QCOMPARE(view.currentRowIndex(), 1);
  QCOMPARE(view.currentPick(), pickOf(1, 1, 0));  // read back from the job file
  press(view, Qt::Key_K);
  press(view, Qt::Key_K);  // the first row: stays
  QCOMPARE(view.currentRowIndex(), 0);
  press(view, Qt::Key_2);  // a new pick replaces the old one
  QCOMPARE(view.currentPick(), pickOf(0, 1, 0));

  const std::map<int64_t, PairPick> expected = {
      {0, pickOf(0, 1, 0)}, {1, pickOf(1, 1, 0)}, {3, pickOf(3, 0, 1, true)}};
  QCOMPARE(PairPickStore::open(path)->picks(), expected);
}

void PairReviewTest::picksSurviveAReopenAndFeedTheDpoExport() {
  QTemporaryDir dir;
  const std::string path = writeJob(dir.path(), 2);
  {
    PairReviewView view;
    view.setJobPath(QString::fromStdString(path));
    SETTLE(view);
    view.chooseLeft();  // row 0: "first" over the longer "second"
    view.nextRow();
    SETTLE(view);
    view.markUnusable();  // row 1; its write ends before the view does
  }
  PairReviewView reopened;  // as after a restart
  reopened.setJobPath(QString::fromStdString(path));
  SETTLE(reopened);
  QCOMPARE(reopened.currentPick(), pickOf(0, 0, 1));
  reopened.nextRow();
  SETTLE(reopened);
  QVERIFY(reopened.currentPick() && reopened.currentPick()->is_unusable);
  reopened.nextRow();
  SETTLE(reopened);
  QVERIFY(!reopened.currentPick());

  const std::string out = dir.path().toStdString() + "/pairs.jsonl";
  const auto store = JobStore::open(path);
  const sluice::ExportStats stats = sluice::export_job(*store, sluice::ExportFormat::DpoPairs, out);
  QCOMPARE(stats.rows_written, int64_t{3});  // rows 0, 3, 4
  QCOMPARE(stats.rows_picked, int64_t{1});
  QFile file(QString::fromStdString(out));
  QVERIFY(file.open(QIODevice::ReadOnly));
  const QList<QByteArray> lines = file.readAll().trimmed().split('\n');
  QCOMPARE(lines.size(), 3);
  // Row 0 follows the pick; row 3 the longest rule.
  QVERIFY2(lines[0].contains(R"("chosen":"row 0 first","rejected":"row 0 second longer")"),
           lines[0].constData());
  QVERIFY2(lines[1].contains(R"("chosen":"row 3 second longer","rejected":"row 3 first")"),
           lines[1].constData());
}

void PairReviewTest::comparesTheChosenTwoOfNSamples() {
  QTemporaryDir dir;
  const std::string path = writeJob(dir.path(), 3);
  PairReviewView view;
  view.setJobPath(QString::fromStdString(path));
  SETTLE(view);
  view.setCompared(2, 1);
  QCOMPARE(view.leftText()->toPlainText(), QString("row 0 third"));
  QCOMPARE(view.rightText()->toPlainText(), QString("row 0 second longer"));
  view.chooseLeft();
  QCOMPARE(view.currentPick(), pickOf(0, 2, 1));
  // Same sample on both sides: no pick is possible.
  view.nextRow();
  SETTLE(view);
  view.setCompared(1, 1);
  view.chooseLeft();
  QVERIFY(!view.currentPick());
  QVERIFY2(view.statusText().contains("same sample"), qPrintable(view.statusText()));
  // Back on row 0 the view shows the picked two again.
  view.previousRow();
  SETTLE(view);
  QCOMPARE(view.leftSample(), 1);
  QCOMPARE(view.rightSample(), 2);
}

void PairReviewTest::jobWithOneSampleSaysWhy() {
  QTemporaryDir dir;
  const std::string path = writeJob(dir.path(), 1);
  PairReviewView view;
  view.setJobPath(QString::fromStdString(path));
  SETTLE(view);
  QCOMPARE(view.currentRowIndex(), qint64{-1});
  QVERIFY2(view.messageText().contains("n = 1"), qPrintable(view.messageText()));
  view.chooseLeft();  // nothing shown: nothing stored
  SETTLE(view);
  QVERIFY(PairPickStore::open(path)->picks().empty());

  // n stored under "sampling" (a job from generate or the app) is read too, both ways.
  QTemporaryDir nested1;
  PairReviewView one;
  one.setJobPath(QString::fromStdString(writeJob(nested1.path(), 1, /*isNested=*/true)));
  SETTLE(one);
  QVERIFY2(one.messageText().contains("n = 1"), qPrintable(one.messageText()));
  QTemporaryDir nested2;
  PairReviewView two;
  two.setJobPath(QString::fromStdString(writeJob(nested2.path(), 2, /*isNested=*/true)));
  SETTLE(two);
  QCOMPARE(two.currentRowIndex(), qint64{0});
  QCOMPARE(two.numRows(), 4);
}

// The job file is read off the GUI thread: while another connection holds it locked, opening it
// in the tab, moving to the next row and picking return at once, and the rows show once the lock
// is gone (a read on the GUI thread would freeze the window for SQLite's busy timeout).
void PairReviewTest::aLockedJobDoesNotBlockTheGuiThread() {
  QTemporaryDir dir;
  const std::string path = writeJob(dir.path(), 2);
  PairReviewView view;
  auto lock = std::make_unique<sluice::test::LockedJobFile>(path);
  QElapsedTimer timer;
  timer.start();
  // The lock holds: a read on this thread waits out the busy timeout (and fails).
  QVERIFY_THROWS_EXCEPTION(sluice::Error, sluice::JobTable::open(path)->count({}));
  QVERIFY2(timer.elapsed() >= sluice::test::kMaxGuiCallMs,
           qPrintable(QString::number(timer.elapsed())));
  timer.restart();
  view.setJobPath(QString::fromStdString(path));
  view.nextRow();
  QVERIFY2(
      timer.elapsed() < sluice::test::kMaxGuiCallMs,
      qPrintable(QString("the GUI thread waited %1 ms for the locked file").arg(timer.elapsed())));
  QVERIFY(view.isBusy());
  QCOMPARE(view.currentRowIndex(), qint64{-1});  // nothing read yet
  lock->release();
  SETTLE(view);
  QCOMPARE(view.numRows(), 4);
  QCOMPARE(view.currentRowIndex(), 0);
  QCOMPARE(view.leftText()->toPlainText(), QString("row 0 first"));

  // A pick while another connection writes shows at once and is stored once the file is free.
  lock = std::make_unique<sluice::test::LockedJobFile>(path,
                                                       sluice::test::LockedJobFile::Lock::Writes);
  timer.restart();
  view.chooseRight();
  QVERIFY(timer.elapsed() < sluice::test::kMaxGuiCallMs);
  QCOMPARE(view.currentPick(), pickOf(0, 1, 0));
  lock->release();
  SETTLE(view);
  const std::map<int64_t, PairPick> expected = {{0, pickOf(0, 1, 0)}};
  QCOMPARE(PairPickStore::open(path)->picks(), expected);
}

void PairReviewTest::wordDiffMarksOnlyTheChangedWords() {
  // "the cat sat" vs "the dog sat down": cat (4..7) only left; dog (4..7) and down (12..16) right.
  const sluice::ui::WordDiff diff = sluice::ui::diffWords("the cat sat", "the dog sat down");
  QCOMPARE(diff.onlyInLeft, (QVector<WordSpan>{{4, 3}}));
  QCOMPARE(diff.onlyInRight, (QVector<WordSpan>{{4, 3}, {12, 4}}));
  const sluice::ui::WordDiff same = sluice::ui::diffWords("a  b\nc", "a b c");
  QVERIFY(same.onlyInLeft.isEmpty() && same.onlyInRight.isEmpty());
  // Too long to compare: nothing marked, and said so.
  const QString longText = QString("w ").repeated(2100);
  QVERIFY(!sluice::ui::diffWords(longText, longText).isComputed);
}

// The pair compares the answers; "Show reasoning" (or R) opens both sides' reasoning above them,
// and it stays open on the next row until it is closed.
void PairReviewTest::reasoningIsOneClickAwayFromTheAnswers() {
  QTemporaryDir dir;
  const std::string path = writeThinkingJob(dir.path());
  PairReviewView view;
  view.resize(1000, 640);
  view.setJobPath(QString::fromStdString(path));
  SETTLE(view);
  view.show();
  view.activateWindow();
  QVERIFY(QTest::qWaitForWindowActive(&view));
  view.leftText()->setFocus();

  QCOMPARE(view.currentRowIndex(), 0);
  QCOMPARE(view.leftText()->toPlainText(), QString("No: 91 = 7 × 13."));
  QCOMPARE(view.rightText()->toPlainText(), QString("Yes, 91 is prime."));
  ReasoningFold* left = view.leftReasoning();
  ReasoningFold* right = view.rightReasoning();
  QVERIFY(left->isVisible() && right->isVisible());
  QVERIFY(!left->isExpanded() && !right->isExpanded());
  QVERIFY(!left->textView()->isVisible());
  QCOMPARE(left->headerText(), QString("Reasoning · 21 tokens"));
  QCOMPARE(right->headerText(), QString("Reasoning · 19 tokens"));
  QVERIFY(view.reasoningButton()->isEnabled());

  QTest::mouseClick(view.reasoningButton(), Qt::LeftButton);
  QVERIFY(view.isReasoningShown());
  QVERIFY(left->textView()->isVisible() && right->textView()->isVisible());
  QCOMPARE(left->reasoningText(), QString("91 = 7 × 13, so it has divisors besides 1 and itself."));
  QCOMPARE(right->reasoningText(),
           QString("It is odd, not divisible by 3 or 5. I think it is prime."));
  QCOMPARE(view.reasoningButton()->text(), QString("Hide reasoning (R)"));
  QVERIFY(view.leftText()->isVisible());  // the answers stay, below
  QVERIFY2(view.statusText().contains("Not picked"), qPrintable(view.statusText()));
  QVERIFY(sluice::test::saveShot(view, "pairs-reasoning-shown"));

  view.leftText()->setFocus();
  SETTLE(view);            // the rows read again when it was shown
  press(view, Qt::Key_J);  // the next row keeps it open
  QCOMPARE(view.currentRowIndex(), 1);
  QVERIFY(left->textView()->isVisible() && right->textView()->isVisible());
  press(view, Qt::Key_R);  // closes both
  QVERIFY(!view.isReasoningShown());
  QVERIFY(!left->textView()->isVisible() && !right->textView()->isVisible());
  QTest::mouseClick(right->headerButton(), Qt::LeftButton);  // either side's header opens both
  QVERIFY(left->isExpanded() && right->isExpanded());
  QVERIFY(view.reasoningButton()->isChecked());

  // A row answered at once: nothing to show, the answers as before.
  view.leftText()->setFocus();
  press(view, Qt::Key_J);
  QCOMPARE(view.currentRowIndex(), 2);
  QVERIFY(!left->isVisible() && !right->isVisible());
  QVERIFY(!view.reasoningButton()->isEnabled());
  QCOMPARE(view.leftText()->toPlainText(), QString("no"));
}

QTEST_MAIN(PairReviewTest)
#include "pair_review_test.moc"
