// The Pairs tab over a small job file written here: the picks stored in the job (read back
// through a fresh PairPickStore, as after a restart) and fed to the DPO export and the export
// dialog (its counts, reviewed rows only); comparing other samples when n > 2, a thinking model's
// reasoning shown on request above the answers compared, a locked job, and the word diff's marks
// and colours. The keys are pair_review_keys_test's. Expected values come from the rows this
// test wrote.
#include "tests/gui/pair_review_jobs.h"

class PairReviewTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }
  void wordDiffColoursAreNotTheVerdictColours();
  void exportDialogCountsPicksAndExportsReviewedRowsOnly();
  void picksSurviveAReopenAndFeedTheDpoExport();
  void comparesTheChosenTwoOfNSamples();
  void jobWithOneSampleSaysWhy();
  void aLockedJobDoesNotBlockTheGuiThread();
  void wordDiffMarksOnlyTheChangedWords();
  void reasoningIsOneClickAwayFromTheAnswers();
};

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
