// The Pairs tab over a small job file written here: keys 1 / 2 / T / X / J / K and Ctrl+Z, working
// as soon as the tab is shown; a decision moving on to the next unreviewed row; the filter; the
// picks stored in the job (read back through a fresh PairPickStore, as after a restart) and fed to
// the DPO export and the export dialog (its counts, reviewed rows only); comparing other samples
// when n > 2, a thinking model's reasoning shown on request above the answers compared, and the
// word diff's marks and colours. Expected values come from the rows this test wrote.
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
#include <map>
#include <memory>
#include <string>

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
// and hand-built jobs do. isAppJob: the whole spec as the app stores it (the window opens only
// those), over the shared Alpaca file and stories260K.
std::string writeJob(const QString& dir, int n, bool isNested = false, bool isAppJob = false) {
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

PairPick tieOf(int64_t row, int left, int right) {
  PairPick pick = pickOf(row, left, right);
  pick.is_tie = true;
  return pick;
}

// Waits until the view's reads and writes (on its pool) have come back.
#define SETTLE(view) QTRY_VERIFY_WITH_TIMEOUT(!(view).isBusy(), 10000)

// Presses key as a person would: to the focused widget of the shown, active window (wherever the
// focus is); then waits for what the view read or wrote.
void press(PairReviewView& view, Qt::Key key, Qt::KeyboardModifiers modifiers = Qt::NoModifier) {
  QWidget* target = QApplication::focusWidget() ? QApplication::focusWidget() : &view;
  QTest::keyClick(target, key, modifiers);
  SETTLE(view);
}

void undoKey(PairReviewView& view) {
  press(view, Qt::Key_Z, Qt::ControlModifier);
}

// Shows view in an active window and puts the focus on one of its texts, as after a click.
bool showFocused(PairReviewView& view) {
  view.resize(900, 600);
  view.show();
  view.activateWindow();
  if (!QTest::qWaitForWindowActive(&view)) return false;
  view.leftText()->setFocus();
  return true;
}

// The angle between two colours' hues, 0..180 degrees.
int hueDistance(const QColor& a, const QColor& b) {
  const int d = std::abs(a.hslHue() - b.hslHue()) % 360;
  return std::min(d, 360 - d);
}

}  // namespace

class PairReviewTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }
  void keysPickMoveAndMarkRows();
  void keysWorkAsSoonAsTheTabIsShown();
  void theWindowsPairsTabTakesKeysAtOnce();
  void aDecisionMovesToTheNextUnreviewedRow();
  void ctrlZUndoesDecisionsAndRestoresTheSelection();
  void filterShowsTheRightRows();
  void wordDiffColoursAreNotTheVerdictColours();
  void exportDialogCountsPicksAndExportsReviewedRowsOnly();
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
  view.setJobPath(QString::fromStdString(path));
  SETTLE(view);
  QVERIFY(showFocused(view));

  QCOMPARE(view.numRows(), 4);
  QCOMPARE(view.currentRowIndex(), 0);
  QCOMPARE(view.leftText()->toPlainText(), QString("row 0 first"));
  QCOMPARE(view.rightText()->toPlainText(), QString("row 0 second longer"));
  QVERIFY(!view.currentPick());

  press(view, Qt::Key_1);  // left chosen; on to row 1
  QVERIFY2(view.statusText().contains("Row 0: sample 1 chosen, sample 2 rejected"),
           qPrintable(view.statusText()));
  QCOMPARE(view.currentRowIndex(), 1);
  QVERIFY(!view.currentPick());
  press(view, Qt::Key_2);  // right chosen; on to row 3 (the failed row 2 is not reviewable)
  QCOMPARE(view.currentRowIndex(), 3);
  press(view, Qt::Key_X);  // unusable; on to row 4
  QCOMPARE(view.currentRowIndex(), 4);
  QVERIFY2(view.statusText().contains("Row 3: unusable"), qPrintable(view.statusText()));
  QVERIFY2(view.statusText().contains("3 of 4 rows reviewed"), qPrintable(view.statusText()));
  press(view, Qt::Key_J);  // the last row: stays
  QCOMPARE(view.currentRowIndex(), 4);
  QVERIFY(!view.currentPick());
  press(view, Qt::Key_K);
  QCOMPARE(view.currentRowIndex(), 3);
  QVERIFY(view.currentPick() && view.currentPick()->is_unusable);
  press(view, Qt::Key_K);
  QCOMPARE(view.currentRowIndex(), 1);
  QCOMPARE(view.currentPick(), pickOf(1, 1, 0));  // read back from the job file
  press(view, Qt::Key_K);
  press(view, Qt::Key_K);  // the first row: stays
  QCOMPARE(view.currentRowIndex(), 0);
  QCOMPARE(view.currentPick(), pickOf(0, 0, 1));
  press(view, Qt::Key_2);  // a new pick replaces the old one; on to row 4, the one unreviewed
  QCOMPARE(view.currentRowIndex(), 4);

  const std::map<int64_t, PairPick> expected = {
      {0, pickOf(0, 1, 0)}, {1, pickOf(1, 1, 0)}, {3, pickOf(3, 0, 1, true)}};
  QCOMPARE(PairPickStore::open(path)->picks(), expected);
}

// The app's layout in small: the setup panel's spin box beside the tabs holds the focus (as after
// editing a parameter), and a click on the Pairs tab shows the view. The keys act on the pairs at
// once, without a click into the view; before, they went to the spin box.
void PairReviewTest::keysWorkAsSoonAsTheTabIsShown() {
  QTemporaryDir dir;
  const std::string path = writeJob(dir.path(), 2);
  QWidget window;
  window.resize(1100, 600);
  auto* setupField = new QSpinBox(&window);
  setupField->setRange(0, 1000);
  auto* tabs = new QTabWidget(&window);
  tabs->addTab(new QLabel("results"), "Results");
  auto* view = new PairReviewView;
  tabs->addTab(view, "Pairs");
  auto* layout = new QHBoxLayout(&window);
  layout->addWidget(setupField);
  layout->addWidget(tabs, 1);
  view->setJobPath(QString::fromStdString(path));
  SETTLE(*view);
  window.show();
  window.activateWindow();
  QVERIFY(QTest::qWaitForWindowActive(&window));
  setupField->setFocus();
  QTRY_COMPARE(QApplication::focusWidget(), static_cast<QWidget*>(setupField));

  QTabBar* bar = tabs->tabBar();
  QTest::mouseClick(bar, Qt::LeftButton, {}, bar->tabRect(1).center());
  QTRY_VERIFY(view->isVisible());
  SETTLE(*view);
  QCOMPARE(view->currentRowIndex(), 0);

  press(*view, Qt::Key_1);  // row 0: left chosen; on to row 1
  QCOMPARE(view->currentRowIndex(), 1);
  press(*view, Qt::Key_2);  // row 1: right chosen; on to row 3
  QCOMPARE(view->currentRowIndex(), 3);
  press(*view, Qt::Key_T);  // row 3: a tie; on to row 4
  QCOMPARE(view->currentRowIndex(), 4);
  press(*view, Qt::Key_K);
  QCOMPARE(view->currentRowIndex(), 3);
  QCOMPARE(view->currentPick(), tieOf(3, 0, 1));
  QVERIFY(sluice::test::saveShot(window, "pairs-tab-tie"));
  press(*view, Qt::Key_X);  // row 3: unusable instead; on to row 4
  QCOMPARE(view->currentRowIndex(), 4);
  press(*view, Qt::Key_K);
  press(*view, Qt::Key_K);
  QCOMPARE(view->currentRowIndex(), 1);
  press(*view, Qt::Key_J);
  QCOMPARE(view->currentRowIndex(), 3);
  QCOMPARE(setupField->value(), 0);  // no key reached the setup field

  const std::map<int64_t, PairPick> expected = {
      {0, pickOf(0, 0, 1)}, {1, pickOf(1, 1, 0)}, {3, pickOf(3, 0, 1, true)}};
  QCOMPARE(PairPickStore::open(path)->picks(), expected);
}

// The same in the app's own window at 1280x720: a job opened, the focus on a field of the setup
// panel, a click on the Pairs tab, and 1 picks at once. Pictures in the light and dark palettes.
void PairReviewTest::theWindowsPairsTabTakesKeysAtOnce() {
  QTemporaryDir dir;
  const std::string path = writeJob(dir.path(), 2, /*isNested=*/false, /*isAppJob=*/true);
  sluice::ui::MainWindow window;
  window.setJobsDirectory(dir.path());
  window.resize(1280, 720);
  window.openJob(QString::fromStdString(path));
  window.show();
  window.activateWindow();
  QVERIFY(QTest::qWaitForWindowActive(&window));
  auto* view = window.findChild<PairReviewView*>();
  QVERIFY(view);
  QTabWidget* tabs = window.tabs();
  tabs->setCurrentIndex(0);
  // A field outside the tabs, as after editing a parameter.
  QWidget* field = nullptr;
  for (QWidget* candidate : window.findChildren<QWidget*>()) {
    if (qobject_cast<QAbstractSpinBox*>(candidate) || qobject_cast<QLineEdit*>(candidate)) {
      if (candidate->isVisible() && candidate->isEnabled() && !tabs->isAncestorOf(candidate)) {
        field = candidate;
        break;
      }
    }
  }
  QVERIFY(field);
  field->setFocus();
  QTRY_COMPARE(QApplication::focusWidget(), field);

  QTabBar* bar = tabs->tabBar();
  QTest::mouseClick(bar, Qt::LeftButton, {}, bar->tabRect(tabs->indexOf(view)).center());
  QTRY_VERIFY(view->isVisible());
  QTRY_COMPARE_WITH_TIMEOUT(view->currentRowIndex(), qint64{0}, 10000);
  SETTLE(*view);
  press(*view, Qt::Key_1);  // row 0: left chosen; on to row 1
  QCOMPARE(view->currentRowIndex(), 1);
  QCOMPARE(PairPickStore::open(path)->picks(), (std::map<int64_t, PairPick>{{0, pickOf(0, 0, 1)}}));
  QVERIFY(sluice::test::saveShot(window, "main-window-pairs-light"));
  const QPalette before = QApplication::palette();
  QApplication::setPalette(sluice::ui::darkPalette());
  QTRY_VERIFY(sluice::ui::pair_colors::isDark(view->rightText()->palette()));
  QCoreApplication::processEvents();  // the view repaints its marks in the new palette (queued)
  QVERIFY(sluice::test::saveShot(window, "main-window-pairs-dark"));
  QApplication::setPalette(before);
}

// Rows 0, 1, 3, 4 are reviewable; row 3 was reviewed before the view opened. A decision moves to
// the next row nobody reviewed, skipping row 3, from the top again when none follows, and stays
// when every row is reviewed.
void PairReviewTest::aDecisionMovesToTheNextUnreviewedRow() {
  QTemporaryDir dir;
  const std::string path = writeJob(dir.path(), 2);
  PairPickStore::open(path)->set(pickOf(3, 0, 1));
  PairReviewView view;
  view.setJobPath(QString::fromStdString(path));
  SETTLE(view);
  QVERIFY(showFocused(view));
  QCOMPARE(view.currentRowIndex(), 0);
  press(view, Qt::Key_1);  // row 0; row 1 is next
  QCOMPARE(view.currentRowIndex(), 1);
  press(view, Qt::Key_2);  // row 1; row 3 is reviewed: row 4
  QCOMPARE(view.currentRowIndex(), 4);
  press(view, Qt::Key_T);  // row 4; every row is reviewed now: it stays
  QCOMPARE(view.currentRowIndex(), 4);
  QCOMPARE(view.currentPick(), tieOf(4, 0, 1));
  QVERIFY2(view.statusText().contains("4 of 4 rows reviewed"), qPrintable(view.statusText()));

  press(view, Qt::Key_K);
  QCOMPARE(view.currentRowIndex(), 3);
  view.clearPick();  // row 3 is unreviewed again; a clear does not move on
  SETTLE(view);
  QCOMPARE(view.currentRowIndex(), 3);
  press(view, Qt::Key_J);
  press(view, Qt::Key_1);  // row 4 again; none follows: from the top, row 3
  QCOMPARE(view.currentRowIndex(), 3);
  const std::map<int64_t, PairPick> expected = {
      {0, pickOf(0, 0, 1)}, {1, pickOf(1, 1, 0)}, {4, pickOf(4, 0, 1)}};
  QCOMPARE(PairPickStore::open(path)->picks(), expected);
}

// Ctrl+Z takes back the last decisions one by one: the row's earlier decision is stored again
// (none, or the pick a new decision replaced), and the row shows again with the samples it
// compared when the decision was made.
void PairReviewTest::ctrlZUndoesDecisionsAndRestoresTheSelection() {
  QTemporaryDir dir;
  const std::string path = writeJob(dir.path(), 3);
  PairReviewView view;
  view.setJobPath(QString::fromStdString(path));
  SETTLE(view);
  QVERIFY(showFocused(view));
  QVERIFY(!view.canUndo());
  view.setCompared(2, 1);
  press(view, Qt::Key_1);  // row 0: sample 3 over sample 2; on to row 1
  QCOMPARE(view.currentRowIndex(), 1);
  press(view, Qt::Key_T);  // row 1: a tie of samples 1 and 2; on to row 3
  QCOMPARE(view.currentRowIndex(), 3);

  undoKey(view);  // the tie: row 1 again, undecided
  QCOMPARE(view.currentRowIndex(), 1);
  QVERIFY(!view.currentPick());
  QCOMPARE(PairPickStore::open(path)->picks(), (std::map<int64_t, PairPick>{{0, pickOf(0, 2, 1)}}));
  QVERIFY2(view.statusText().contains("Undone: row 1"), qPrintable(view.statusText()));
  undoKey(view);  // the pick: row 0 again, comparing samples 3 and 2 as when it was made
  QCOMPARE(view.currentRowIndex(), 0);
  QVERIFY(!view.currentPick());
  QCOMPARE(view.leftSample(), 2);
  QCOMPARE(view.rightSample(), 1);
  QCOMPARE(view.leftText()->toPlainText(), QString("row 0 third"));
  QVERIFY(PairPickStore::open(path)->picks().empty());
  QVERIFY(!view.canUndo());
  undoKey(view);  // nothing left to undo
  QCOMPARE(view.currentRowIndex(), 0);

  // A decision that replaced another: undo stores the one before.
  press(view, Qt::Key_2);  // row 0: sample 2 over sample 3; on to row 1
  press(view, Qt::Key_K);
  QCOMPARE(view.currentRowIndex(), 0);
  QCOMPARE(view.leftSample(), 1);  // a stored pick shows its samples, the lower on the left
  view.setCompared(0, 1);
  press(view, Qt::Key_X);  // row 0: unusable; on to row 1
  QCOMPARE(view.currentRowIndex(), 1);
  undoKey(view);
  QCOMPARE(view.currentRowIndex(), 0);
  QCOMPARE(view.currentPick(), pickOf(0, 1, 2));
  QCOMPARE(view.leftSample(), 0);  // the samples compared when X was pressed
  QCOMPARE(view.rightSample(), 1);
  QCOMPARE(PairPickStore::open(path)->picks(), (std::map<int64_t, PairPick>{{0, pickOf(0, 1, 2)}}));
}

// Rows 0 (picked), 1 (a tie), 3 (unusable) and 4 (unreviewed): each filter shows its rows, J / K
// walk only those, and a row the filter hides gives way to the next one it shows.
void PairReviewTest::filterShowsTheRightRows() {
  QTemporaryDir dir;
  const std::string path = writeJob(dir.path(), 2);
  {
    const auto picks = PairPickStore::open(path);
    picks->set(pickOf(0, 1, 0));
    picks->set(tieOf(1, 0, 1));
    picks->set(pickOf(3, 0, 1, /*isUnusable=*/true));
  }
  PairReviewView view;
  view.setJobPath(QString::fromStdString(path));
  SETTLE(view);
  QVERIFY(showFocused(view));
  using Filter = PairReviewView::RowFilter;
  using Rows = std::vector<int64_t>;
  QComboBox* combo = view.filterCombo();
  QCOMPARE(view.filteredRows(), (Rows{0, 1, 3, 4}));
  QCOMPARE(combo->itemText(0), QString("All rows (4)"));
  QCOMPARE(combo->itemText(1), QString("Unreviewed (1)"));
  QCOMPARE(combo->itemText(2), QString("Reviewed (3)"));
  QCOMPARE(combo->itemText(3), QString("Ties (1)"));

  combo->setCurrentIndex(combo->findData(static_cast<int>(Filter::Unreviewed)));
  SETTLE(view);
  QCOMPARE(view.filter(), Filter::Unreviewed);
  QCOMPARE(view.filteredRows(), (Rows{4}));
  QCOMPARE(view.currentRowIndex(), 4);  // row 0 is reviewed: the view moved on

  view.setFilter(Filter::Reviewed);
  SETTLE(view);
  QCOMPARE(view.filteredRows(), (Rows{0, 1, 3}));
  QCOMPARE(view.currentRowIndex(), 0);  // none after row 4: from the top
  press(view, Qt::Key_J);
  QCOMPARE(view.currentRowIndex(), 1);
  press(view, Qt::Key_J);
  QCOMPARE(view.currentRowIndex(), 3);
  press(view, Qt::Key_J);  // row 4 is not reviewed: stays
  QCOMPARE(view.currentRowIndex(), 3);
  press(view, Qt::Key_K);
  QCOMPARE(view.currentRowIndex(), 1);

  view.setFilter(Filter::Ties);
  SETTLE(view);
  QCOMPARE(view.filteredRows(), (Rows{1}));
  QCOMPARE(view.currentRowIndex(), 1);
  QCOMPARE(view.currentPick(), tieOf(1, 0, 1));
  press(view, Qt::Key_J);
  press(view, Qt::Key_K);
  QCOMPARE(view.currentRowIndex(), 1);  // the only tie

  // Under Unreviewed, deciding the last unreviewed row leaves none: the status says so.
  view.setFilter(Filter::Unreviewed);
  SETTLE(view);
  QCOMPARE(view.currentRowIndex(), 4);
  press(view, Qt::Key_1);
  QCOMPARE(view.currentRowIndex(), 4);
  QVERIFY(view.filteredRows().empty());
  QCOMPARE(combo->itemText(1), QString("Unreviewed (0)"));
  QVERIFY2(view.statusText().contains("No row matches the filter"), qPrintable(view.statusText()));
  view.setFilter(Filter::All);
  SETTLE(view);
  QCOMPARE(view.filteredRows(), (Rows{0, 1, 3, 4}));
}

// The word marks say "only in this sample" on either side; the verdicts say chosen (green) and
// rejected (red). In the light and the dark palette the marks' hues stay well away from both,
// and the views show the marks in those colours.
void PairReviewTest::wordDiffColoursAreNotTheVerdictColours() {
  namespace colors = sluice::ui::pair_colors;
  std::unique_ptr<QStyle> fusion(QStyleFactory::create("Fusion"));
  QVERIFY(fusion);
  const QPalette light = fusion->standardPalette();
  const QPalette dark = sluice::ui::darkPalette();
  QVERIFY(!colors::isDark(light));
  QVERIFY(colors::isDark(dark));
  for (const QPalette& palette : {light, dark}) {
    for (const QColor& mark : {colors::onlyInLeft(palette), colors::onlyInRight(palette)}) {
      for (const QColor& verdict : {colors::chosen(palette), colors::rejected(palette)}) {
        QVERIFY2(hueDistance(mark, verdict) >= 30,
                 qPrintable(QString("mark %1 and verdict %2 are %3 degrees apart")
                                .arg(mark.name(), verdict.name())
                                .arg(hueDistance(mark, verdict))));
      }
      // A tint of the base: light on a light base, dark on a dark one, so the text reads.
      QCOMPARE(mark.lightness() >= 128, !colors::isDark(palette));
    }
    QVERIFY(hueDistance(colors::onlyInLeft(palette), colors::onlyInRight(palette)) >= 30);
    QVERIFY(hueDistance(colors::chosen(palette), colors::rejected(palette)) >= 90);
  }

  for (const QPalette& palette : {light, dark}) {
    QPlainTextEdit left;
    QPlainTextEdit right;
    left.setPalette(palette);
    right.setPalette(palette);
    sluice::ui::showWordDiff(&left, "the cat sat", &right, "the dog sat");
    QCOMPARE(left.extraSelections().size(), 1);
    QCOMPARE(right.extraSelections().size(), 1);
    QCOMPARE(left.extraSelections().front().format.background().color(),
             colors::onlyInLeft(palette));
    QCOMPARE(right.extraSelections().front().format.background().color(),
             colors::onlyInRight(palette));
  }

  // The view follows the application's palette: row 0 picked (sample 2 chosen) shows its
  // verdicts and marks in the palette's colours, again after a switch from light to dark.
  QTemporaryDir dir;
  const std::string path = writeJob(dir.path(), 2);
  PairPickStore::open(path)->set(pickOf(0, 1, 0));
  const QPalette before = QApplication::palette();
  PairReviewView view;
  view.resize(880, 560);
  view.setJobPath(QString::fromStdString(path));
  SETTLE(view);
  view.show();
  QVERIFY(QTest::qWaitForWindowExposed(&view));
  for (const auto& [palette, name] : {std::pair{light, "light"}, std::pair{dark, "dark"}}) {
    QApplication::setPalette(palette);
    const QString chosen = colors::chosen(palette).name();
    QTRY_VERIFY2(view.rightVerdict()->styleSheet().contains(chosen),
                 qPrintable(view.rightVerdict()->styleSheet()));
    QVERIFY2(view.leftVerdict()->styleSheet().contains(colors::rejected(palette).name()),
             qPrintable(view.leftVerdict()->styleSheet()));
    QCOMPARE(view.rightText()->extraSelections().front().format.background().color(),
             colors::onlyInRight(palette));
    QVERIFY(sluice::test::saveShot(view, QString("pairs-picked-%1").arg(name)));
  }
  QApplication::setPalette(before);
}

// The export dialog over a reviewed job: rows 0 (picked) and 1 (a tie) were reviewed, rows 3 and 4
// were not. The result says where the pairs came from; "Reviewed rows only" leaves rows 3 and 4
// out.
void PairReviewTest::exportDialogCountsPicksAndExportsReviewedRowsOnly() {
  QTemporaryDir dir;
  const std::string path = writeJob(dir.path(), 2);
  {
    const auto picks = PairPickStore::open(path);
    picks->set(pickOf(0, 0, 1));
    picks->set(tieOf(1, 0, 1));
  }
  const QString out = dir.path() + "/pairs.jsonl";
  sluice::ui::ExportDialog dialog(QString::fromStdString(path));
  QTRY_VERIFY(dialog.hasReadJob());
  dialog.setChoices(out, sluice::ExportFormat::DpoPairs, {});
  auto* reviewedOnly = dialog.findChild<QCheckBox*>("reviewedOnly");
  QVERIFY(reviewedOnly);
  QVERIFY(reviewedOnly->isEnabled());
  QVERIFY(!reviewedOnly->isChecked());

  QSignalSpy finished(&dialog, &sluice::ui::ExportDialog::exportFinished);
  dialog.startExport();
  QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 1, 10000);
  QVERIFY2(dialog.resultText().contains(
               "1 pair from review picks, 2 by the longest rule, 0 of them ties"),
           qPrintable(dialog.resultText()));
  QVERIFY2(dialog.resultText().contains("1 marked a tie in review"),
           qPrintable(dialog.resultText()));

  QTest::mouseClick(reviewedOnly, Qt::LeftButton);
  QVERIFY(reviewedOnly->isChecked());
  QVERIFY(dialog.options().reviewed_only);
  dialog.startExport();
  QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 2, 10000);
  QVERIFY2(dialog.resultText().contains(
               "1 pair from review picks, 0 by the longest rule (reviewed rows only)"),
           qPrintable(dialog.resultText()));
  QVERIFY2(dialog.resultText().contains("2 not reviewed"), qPrintable(dialog.resultText()));
  QFile file(out);
  QVERIFY(file.open(QIODevice::ReadOnly));
  const QList<QByteArray> lines = file.readAll().trimmed().split('\n');
  QCOMPARE(lines.size(), 1);
  QVERIFY2(lines[0].contains(R"("chosen":"row 0 first","rejected":"row 0 second longer")"),
           lines[0].constData());
  QVERIFY(sluice::test::saveShot(dialog, "export-dialog-reviewed-only"));

  // Another format: the box does not apply.
  dialog.setChoices(out, sluice::ExportFormat::Jsonl, {});
  QVERIFY(!reviewedOnly->isEnabled());
}

void PairReviewTest::picksSurviveAReopenAndFeedTheDpoExport() {
  QTemporaryDir dir;
  const std::string path = writeJob(dir.path(), 2);
  {
    PairReviewView view;
    view.setJobPath(QString::fromStdString(path));
    SETTLE(view);
    view.chooseLeft();  // row 0: "first" over the longer "second"; on to row 1
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
  // Same sample on both sides (on row 1, where the pick moved on to): no pick is possible.
  SETTLE(view);
  QCOMPARE(view.currentRowIndex(), 1);
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
