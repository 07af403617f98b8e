// The Pairs tab over a judged job (each sample's extra holds the judge's score, ratings and
// rationales, as the judge step writes them): each side's score and rationale, the judge's verdict
// as the pre-filled decision that Enter confirms and 1 / 2 / T / D overrule, the arrow keys, the
// judge's best and worst compared by default with n > 2, the "Judge and human disagree" and
// "Small margin" filters, a person's pick winning over the judge in the DPO export (rule score),
// and pictures at 1280x720 in both palettes. Expected values come from the scores written here.
#include "engine/jobs/job_table.h"
#include "tests/gui/pair_review_jobs.h"
#include "ui/pairs/judge_note.h"
#include "ui/pairs/judge_verdict.h"

using sluice::ui::JudgeNote;
using Scores = std::vector<std::optional<double>>;

class PairReviewJudgeTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }
  void eachSideShowsItsScoreAndTheJudgesVerdict();
  void enterConfirmsAndKeysOverruleTheJudge();
  void comparesTheJudgesBestAndWorstOfN();
  void filtersFindDisagreementsAndSmallMargins();
  void smallMarginFollowsTheWinRateScale();
  void jobTableReadsTheScoresOfDoneRows();
  void aPickWinsOverTheJudgeInTheDpoExport();
  void judgeNoteFoldsALongRationale();
  void picturesAt1280x720();
};

void PairReviewJudgeTest::eachSideShowsItsScoreAndTheJudgesVerdict() {
  QTemporaryDir dir;
  const std::string path =
      writeJudgedJob(dir.path(), {{4.5, 2.0}, {2.0, 4.0}, {3.0, 3.0}, {std::nullopt, 4.0}});
  PairReviewView view;
  view.resize(1280, 720);
  view.setJobPath(QString::fromStdString(path));
  SETTLE(view);
  QCOMPARE(view.currentRowIndex(), 0);
  QVERIFY(!view.leftJudge()->isHidden());
  QVERIFY(!view.rightJudge()->isHidden());
  QVERIFY2(view.leftJudge()->note().startsWith("Judge: 4.5 of 5 · ratings 4, 5\n"),
           qPrintable(view.leftJudge()->note()));
  QVERIFY2(view.leftJudge()->note().contains("The rationale for row 0 sample 0"),
           qPrintable(view.leftJudge()->note()));
  QVERIFY2(view.rightJudge()->note().startsWith("Judge: 2.0 of 5 · ratings 2, 2\n"),
           qPrintable(view.rightJudge()->note()));
  QVERIFY(!view.judgeLine()->isHidden());
  QVERIFY2(view.judgeLine()->text().startsWith("Judge: left (4.5 vs 2.0)"),
           qPrintable(view.judgeLine()->text()));
  QVERIFY(!view.currentPick());  // pre-filled, not stored

  view.nextRow();
  SETTLE(view);
  QVERIFY2(view.judgeLine()->text().startsWith("Judge: right (2.0 vs 4.0)"),
           qPrintable(view.judgeLine()->text()));
  view.nextRow();
  SETTLE(view);
  QVERIFY2(view.judgeLine()->text().startsWith("Judge: a tie (3.0 vs 3.0)"),
           qPrintable(view.judgeLine()->text()));
  // One side not judged: no verdict, and only the judged side shows a note.
  view.nextRow();
  SETTLE(view);
  QCOMPARE(view.currentRowIndex(), 3);
  QVERIFY(view.judgeLine()->isHidden());
  QVERIFY(view.leftJudge()->isHidden());
  QVERIFY(!view.rightJudge()->isHidden());
}

void PairReviewJudgeTest::enterConfirmsAndKeysOverruleTheJudge() {
  QTemporaryDir dir;
  const std::string path = writeJudgedJob(
      dir.path(), {{4.5, 2.0}, {2.0, 4.0}, {3.0, 3.0}, {5.0, 1.0}, {1.0, 2.0}, {2.0, 3.0}});
  PairReviewView view;
  view.setJobPath(QString::fromStdString(path));
  SETTLE(view);
  QVERIFY(showFocused(view));
  press(view, Qt::Key_Return);  // row 0: the judge's left
  QCOMPARE(view.currentRowIndex(), 1);
  press(view, Qt::Key_1);  // row 1: the judge said right; the person overrules
  QCOMPARE(view.currentRowIndex(), 2);
  QVERIFY2(view.judgeLine()->text().startsWith("Judge: a tie (3.0 vs 3.0)"),
           qPrintable(view.judgeLine()->text()));
  press(view, Qt::Key_Enter);  // row 2: the judge's tie, from the keypad's Enter
  QCOMPARE(view.currentRowIndex(), 3);
  press(view, Qt::Key_D);  // row 3 discarded
  QCOMPARE(view.currentRowIndex(), 4);
  press(view, Qt::Key_T);  // row 4: a tie where the judge saw right
  QCOMPARE(view.currentRowIndex(), 5);
  // The arrows move without deciding: back to row 4 (Left, then Up from row 4 goes to 3), on
  // again with Right and Down.
  press(view, Qt::Key_Left);
  QCOMPARE(view.currentRowIndex(), 4);
  QVERIFY2(view.judgeLine()->text().contains("your decision differs"),
           qPrintable(view.judgeLine()->text()));
  press(view, Qt::Key_Up);
  QCOMPARE(view.currentRowIndex(), 3);
  QVERIFY2(view.judgeLine()->text().contains("you discarded the row"),
           qPrintable(view.judgeLine()->text()));
  press(view, Qt::Key_Down);
  QCOMPARE(view.currentRowIndex(), 4);
  press(view, Qt::Key_Right);
  QCOMPARE(view.currentRowIndex(), 5);
  QVERIFY(!view.currentPick());
  // Ctrl+Z takes back row 4's tie.
  undoKey(view);
  QCOMPARE(view.currentRowIndex(), 4);
  QVERIFY(!view.currentPick());

  const auto stored = PairPickStore::open(path)->picks();
  QCOMPARE(stored.size(), size_t{4});
  QCOMPARE(stored.at(0), pickOf(0, 0, 1));
  QCOMPARE(stored.at(1), pickOf(1, 0, 1));
  QCOMPARE(stored.at(2), tieOf(2, 0, 1));
  QVERIFY(stored.at(3).is_unusable);
  QVERIFY(!stored.count(4));
}

void PairReviewJudgeTest::comparesTheJudgesBestAndWorstOfN() {
  QTemporaryDir dir;
  const std::string path =
      writeJudgedJob(dir.path(), {{2.0, 5.0, 1.0}, {3.0, 3.0, 3.0}, {std::nullopt, 2.0, 4.0}});
  PairReviewView view;
  view.setJobPath(QString::fromStdString(path));
  SETTLE(view);
  QCOMPARE(view.leftSample(), 1);   // 5.0
  QCOMPARE(view.rightSample(), 2);  // 1.0
  QVERIFY2(view.judgeLine()->text().startsWith("Judge: left (5.0 vs 1.0)"),
           qPrintable(view.judgeLine()->text()));
  view.acceptJudge();
  SETTLE(view);
  QCOMPARE(PairPickStore::open(path)->pick(0), pickOf(0, 1, 2));
  // All equal: still two different samples, the first and the last.
  QCOMPARE(view.currentRowIndex(), 1);
  QCOMPARE(view.leftSample(), 0);
  QCOMPARE(view.rightSample(), 2);
  // Sample 0 not judged: the best and worst of the two judged.
  view.nextRow();
  SETTLE(view);
  QCOMPARE(view.leftSample(), 2);
  QCOMPARE(view.rightSample(), 1);
}

// Rows (scores; decision): 0 (4.5, 2.0; sample 1 chosen) disagrees; 1 (3.5, 3.0; none) is a
// small margin; 2 (3.0, 3.0; a tie) agrees, small; 3 (4.0, 2.0; a tie) disagrees; 4 (5.0, 4.2;
// sample 0 chosen) agrees, small; 5 (2.0, 2.0; sample 1 chosen) disagrees, small; 6 (not judged;
// sample 0 chosen) neither; 7 (1.0, 5.0; unusable) neither.
void PairReviewJudgeTest::filtersFindDisagreementsAndSmallMargins() {
  QTemporaryDir dir;
  const std::string path = writeJudgedJob(dir.path(), {{4.5, 2.0},
                                                       {3.5, 3.0},
                                                       {3.0, 3.0},
                                                       {4.0, 2.0},
                                                       {5.0, 4.2},
                                                       {2.0, 2.0},
                                                       {std::nullopt, std::nullopt},
                                                       {1.0, 5.0}});
  {
    const auto picks = PairPickStore::open(path);
    picks->set(pickOf(0, 1, 0));
    picks->set(tieOf(2, 0, 1));
    picks->set(tieOf(3, 0, 1));
    picks->set(pickOf(4, 0, 1));
    picks->set(pickOf(5, 1, 0));
    picks->set(pickOf(6, 0, 1));
    picks->set(pickOf(7, 0, 1, /*isUnusable=*/true));
  }
  PairReviewView view;
  view.setJobPath(QString::fromStdString(path));
  SETTLE(view);
  view.setFilter(PairReviewView::RowFilter::Disagree);
  SETTLE(view);
  QCOMPARE(view.filteredRows(), (std::vector<int64_t>{0, 3, 5}));
  QCOMPARE(view.currentRowIndex(), 0);
  QVERIFY2(view.filterCombo()->currentText() == "Judge and human disagree (3)",
           qPrintable(view.filterCombo()->currentText()));
  view.nextRow();
  SETTLE(view);
  QCOMPARE(view.currentRowIndex(), 3);
  view.setFilter(PairReviewView::RowFilter::SmallMargin);
  SETTLE(view);
  QCOMPARE(view.filteredRows(), (std::vector<int64_t>{1, 2, 4, 5}));
  QVERIFY2(view.filterCombo()->currentText() == "Small margin (4)",
           qPrintable(view.filterCombo()->currentText()));
  // Overruling changes what disagrees: row 1 (judge left) decided right joins the filter.
  view.setFilter(PairReviewView::RowFilter::All);
  while (view.currentRowIndex() != 1) {
    view.previousRow();
    SETTLE(view);
  }
  view.chooseRight();
  SETTLE(view);
  view.setFilter(PairReviewView::RowFilter::Disagree);
  QCOMPARE(view.filteredRows(), (std::vector<int64_t>{0, 1, 3, 5}));
}

// Win rates (pairwise) are close below 0.25: 0.6 vs 0.4 is, 0.75 vs 0.25 and 0.9 vs 0.4 are not
// (0.5 apart, which on ratings would count as close).
void PairReviewJudgeTest::smallMarginFollowsTheWinRateScale() {
  QCOMPARE(sluice::ui::smallMargin(sluice::ui::JudgeScale::Rating), 1.0);
  QCOMPARE(sluice::ui::smallMargin(sluice::ui::JudgeScale::WinRate), 0.25);
  QTemporaryDir dir;
  const std::string path =
      writeJudgedJob(dir.path(), {{0.6, 0.4}, {0.75, 0.25}, {0.9, 0.4}}, "pairwise");
  PairReviewView view;
  view.setJobPath(QString::fromStdString(path));
  SETTLE(view);
  QVERIFY2(view.judgeLine()->text().startsWith("Judge: left (0.60 vs 0.40)"),
           qPrintable(view.judgeLine()->text()));
  QVERIFY2(view.leftJudge()->note().startsWith("Judge: win rate 0.60\n"),
           qPrintable(view.leftJudge()->note()));
  view.setFilter(PairReviewView::RowFilter::SmallMargin);
  QCOMPARE(view.filteredRows(), (std::vector<int64_t>{0}));
}

// JobTable::judge_scores: done rows only, a score that is not a number counts as none, and rows
// without any score are left out.
void PairReviewJudgeTest::jobTableReadsTheScoresOfDoneRows() {
  QTemporaryDir dir;
  const std::string path = (dir.path() + "/scores.sluicejob").toStdString();
  {
    JobInfo info;
    info.source_path = "/in.jsonl";
    info.source_format = "jsonl";
    info.model_path = "/m.bin";
    auto store = JobStore::create(path, info);
    RowResult row;
    row.samples = {judgedSample("a", 4.0, "ultrafeedback", "r"), sample("b"),
                   judgedSample("c", 1.5, "ultrafeedback", "r")};
    store->add_result(row);
    row.row_index = 1;
    row.samples = {sample("a"), sample("b")};
    row.samples[0].extra["score"] = "high";  // not a number
    store->add_result(row);
    row.row_index = 2;
    row.status = RowStatus::Failed;
    row.samples = {judgedSample("a", 3.0, "ultrafeedback", "r")};
    store->add_result(row);
    store->flush();
  }
  // Every sample (the job's n unknown), and samples 0..n-1 by the job's n.
  const auto table = sluice::JobTable::open(path);
  for (const int n : {0, 3}) {
    const auto scores = table->judge_scores(n);
    QCOMPARE(scores.rubric, std::string("ultrafeedback"));
    QCOMPARE(scores.by_row.size(), size_t{1});
    QCOMPARE(scores.by_row.at(0), (Scores{4.0, std::nullopt, 1.5}));
  }
  const auto firstTwo = table->judge_scores(2);
  QCOMPARE(firstTwo.by_row.at(0), (Scores{4.0, std::nullopt}));
}

// --dpo-rule score exports the judge's order, except where a person picked: row 0's pick
// (sample 1, scored 2.0) wins over the judge's 4.5; row 1 follows the judge.
void PairReviewJudgeTest::aPickWinsOverTheJudgeInTheDpoExport() {
  QTemporaryDir dir;
  const std::string path = writeJudgedJob(dir.path(), {{4.5, 2.0}, {2.0, 4.0}});
  {
    PairReviewView view;
    view.setJobPath(QString::fromStdString(path));
    SETTLE(view);
    view.chooseRight();  // row 0: against the judge
    SETTLE(view);
  }
  const std::string out = dir.path().toStdString() + "/pairs.jsonl";
  sluice::ExportOptions options;
  options.dpo_rule = sluice::DpoRule::Score;
  const auto store = JobStore::open(path);
  const sluice::ExportStats stats =
      sluice::export_job(*store, sluice::ExportFormat::DpoPairs, out, options);
  QCOMPARE(stats.rows_written, int64_t{2});
  QCOMPARE(stats.rows_picked, int64_t{1});
  QFile file(QString::fromStdString(out));
  QVERIFY(file.open(QIODevice::ReadOnly));
  const QList<QByteArray> lines = file.readAll().trimmed().split('\n');
  QCOMPARE(lines.size(), 2);
  QVERIFY2(lines[0].contains(R"("chosen":"row 0 sample 1","rejected":"row 0 sample 0")"),
           lines[0].constData());
  QVERIFY2(lines[1].contains(R"("chosen":"row 1 sample 1","rejected":"row 1 sample 0")"),
           lines[1].constData());
}

void PairReviewJudgeTest::judgeNoteFoldsALongRationale() {
  JudgeNote note;
  note.resize(300, 200);
  note.show();
  QString rationale;
  for (int i = 0; i < 40; ++i) rationale += QString("word%1 ").arg(i);
  const QString whole = "Judge: 4.5 of 5\n" + rationale.trimmed() + "\nA second rationale.";
  note.setNote(whole);
  QVERIFY(note.isCut());
  QCOMPARE(note.text().split('\n').size(), JudgeNote::kFoldedLines);
  QVERIFY2(note.text().endsWith(QStringLiteral("…")), qPrintable(note.text()));
  QVERIFY(note.text().startsWith("Judge: 4.5 of 5\nword0 "));
  QCOMPARE(note.toolTip(), whole);
  QTest::mouseClick(&note, Qt::LeftButton);
  QVERIFY(note.isExpanded());
  QCOMPARE(note.text(), whole);
  QTest::mouseClick(&note, Qt::LeftButton);
  QVERIFY(!note.isExpanded());
  QCOMPARE(note.text().split('\n').size(), JudgeNote::kFoldedLines);
  // A short note is whole and not cut.
  note.setNote("Judge: 2.0 of 5\nFine.");
  QVERIFY(!note.isCut());
  QCOMPARE(note.text(), QString("Judge: 2.0 of 5\nFine."));
}

void PairReviewJudgeTest::picturesAt1280x720() {
  QTemporaryDir dir;
  // Long answers and rationales, as a real judge writes them.
  const std::string path = (dir.path() + "/shots.sluicejob").toStdString();
  {
    JobInfo info;
    info.source_path = "/data/in.jsonl";
    info.source_format = "jsonl";
    info.model_path = "/m.bin";
    info.params["sampling"]["n"] = 2;
    auto store = JobStore::create(path, info);
    RowResult row;
    row.prompt = "Explain why the sky is blue to a ten-year-old, in a short paragraph.";
    row.samples = {
        judgedSample("Sunlight is made of all colours. When it enters the air, the tiny gas "
                     "molecules scatter the short blue waves much more than the red ones, so blue "
                     "light comes at us from every part of the sky. That is why the sky looks "
                     "blue, and why sunsets, whose light travels through more air, look red.",
                     4.5, "ultrafeedback",
                     "Accurate and pitched at the right level: it names scattering, says why blue "
                     "scatters more than red and ties it to sunsets. Could mention that violet is "
                     "scattered too but our eyes are less sensitive to it."),
        judgedSample("The sky is blue because it reflects the ocean. Water is blue, and the sky "
                     "acts like a big mirror above it.",
                     2.0, "ultrafeedback",
                     "A common misconception stated as fact: the sky is not a mirror of the ocean. "
                     "Short and readable, but wrong, so it cannot score above 2.")};
    store->add_result(row);
    store->flush();
  }
  const QPalette before = QApplication::palette();
  std::unique_ptr<QStyle> fusion(QStyleFactory::create("Fusion"));
  PairReviewView view;
  view.resize(1280, 720);
  view.show();
  QVERIFY(QTest::qWaitForWindowExposed(&view));
  view.setJobPath(QString::fromStdString(path));
  SETTLE(view);
  for (const auto& [palette, name] : {std::pair{fusion->standardPalette(), "light"},
                                      std::pair{sluice::ui::darkPalette(), "dark"}}) {
    QApplication::setPalette(palette);
    QTRY_VERIFY2(
        view.leftJudge()->styleSheet().contains(sluice::ui::pair_colors::chosen(palette).name()),
        qPrintable(QString("%1: row %2, samples %3 and %4, style '%5', expected %6")
                       .arg(name)
                       .arg(view.currentRowIndex())
                       .arg(view.leftSample())
                       .arg(view.rightSample())
                       .arg(view.leftJudge()->styleSheet(),
                            sluice::ui::pair_colors::chosen(palette).name())));
    // The filter shows its text: it was shown (empty) before the rows were read.
    const QComboBox* filter = view.filterCombo();
    QVERIFY2(filter->width() > filter->fontMetrics().horizontalAdvance(filter->currentText()),
             qPrintable(QString("%1 px for '%2'").arg(filter->width()).arg(filter->currentText())));
    // The note and the verdict line fit: the note folds to its lines, the answers keep the room.
    QVERIFY(view.leftJudge()->height() < view.leftText()->height());
    QVERIFY(sluice::test::saveShot(view, QString("pairs-judge-%1").arg(name)));
  }
  QApplication::setPalette(before);
}

QTEST_MAIN(PairReviewJudgeTest)
#include "pair_review_judge_test.moc"
