// The Pairs tab by keys alone: 1 / 2 / T / X / J / K and Ctrl+Z, working as soon as the tab is
// shown (a lone view and the app's own window at 1280x720); a decision moving on to the next
// unreviewed row; undo restoring the decision and the samples compared; the row filter. Expected
// values come from the rows this test wrote.
#include "tests/gui/pair_review_jobs.h"

class PairReviewKeysTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }
  void keysPickMoveAndMarkRows();
  void keysWorkAsSoonAsTheTabIsShown();
  void theWindowsPairsTabTakesKeysAtOnce();
  void aDecisionMovesToTheNextUnreviewedRow();
  void ctrlZUndoesDecisionsAndRestoresTheSelection();
  void filterShowsTheRightRows();
};

void PairReviewKeysTest::keysPickMoveAndMarkRows() {
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
void PairReviewKeysTest::keysWorkAsSoonAsTheTabIsShown() {
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
void PairReviewKeysTest::theWindowsPairsTabTakesKeysAtOnce() {
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
void PairReviewKeysTest::aDecisionMovesToTheNextUnreviewedRow() {
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
void PairReviewKeysTest::ctrlZUndoesDecisionsAndRestoresTheSelection() {
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
void PairReviewKeysTest::filterShowsTheRightRows() {
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

QTEST_MAIN(PairReviewKeysTest)
#include "pair_review_keys_test.moc"
