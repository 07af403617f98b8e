// The results table and detail pane over a real job file of 20k rows written by JobStore
// (results_job_rows.h: varied statuses, Unicode, long outputs, several samples). Every expectation
// is computed here from the rows the test wrote, never read back through the code under test. The
// model runs under QAbstractItemModelTester throughout.
#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QElapsedTimer>
#include <QHeaderView>
#include <QLineEdit>
#include <QLocale>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QTimer>
#include <QToolButton>
#include <QtTest>
#include <algorithm>
#include <functional>
#include <memory>
#include <string>

#include "engine/jobs/job_store.h"
#include "tests/gui/gui_shots.h"
#include "tests/gui/locked_job_file.h"
#include "tests/gui/results_job_rows.h"
#include "tests/gui/results_model_reads.h"
#include "ui/common/reasoning_fold.h"
#include "ui/results/results_model.h"
#include "ui/results/results_panel.h"
#include "ui/results/row_detail_pane.h"
#include "ui/window/app_palette.h"

using sluice::JobInfo;
using sluice::JobStore;
using sluice::RowResult;
using sluice::RowStatus;
using sluice::SampleResult;
using sluice::ui::ReasoningFold;
using sluice::ui::ResultsModel;
using sluice::ui::ResultsPanel;

using namespace sluice::gui_test;

namespace {

// A thinking model's row: sample 0 reasoned, sample 1 answered at once (no reasoning).
RowResult thinkingRow() {
  RowResult row;
  row.row_index = 0;
  row.line = 1;
  row.input["question"] = "What is 17 × 24?";
  row.prompt = "<|im_start|>user\nWhat is 17 × 24?<|im_end|>\n<|im_start|>assistant\n";
  row.prompt_tokens = 17;
  row.ttft_ms = 12.0;
  row.total_ms = 480.0;
  SampleResult reasoned;
  reasoned.reasoning =
      "The user asks for 17 × 24.\n17 × 24 = 17 × 20 + 17 × 4 = 340 + 68 = 408.\n"
      "Check: 24 × 17 = 24 × 10 + 24 × 7 = 240 + 168 = 408. Both agree.";
  reasoned.reasoning_tokens = 61;
  reasoned.output = "17 × 24 = 408.";
  reasoned.output_tokens = 70;
  reasoned.finish_reason = "stop";
  SampleResult direct;
  direct.output = "408";
  direct.output_tokens = 6;
  direct.finish_reason = "stop";
  row.samples = {reasoned, direct};
  return row;
}

std::string asciiLower(std::string text) {
  for (char& c : text) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return text;
}

// The test's own search: ASCII case-insensitive, over prompt, every output and the error.
bool rowMatches(int64_t i, const std::string& search) {
  const RowResult row = makeRow(i);
  const std::string needle = asciiLower(search);
  const auto has = [&](const std::string& text) {
    return asciiLower(text).find(needle) != std::string::npos;
  };
  if (has(row.prompt) || has(row.error)) return true;
  return std::any_of(row.samples.begin(), row.samples.end(),
                     [&](const SampleResult& s) { return has(s.output); });
}

// What the table shows for a head: the first 200 characters, "…" when cut, on one line.
QString expectedHead(const std::string& text) {
  const std::u32string chars = QString::fromStdString(text).toStdU32String();
  QString head = QString::fromStdU32String(chars.substr(0, 200));
  if (chars.size() > 200) head += QChar(0x2026);
  head.replace(QLatin1Char('\n'), QStringLiteral(" \u21b5 "));
  return head;
}

}  // namespace

class ResultsTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase();
  void modelShowsTheStoredRows();
  void filtersMatchIndependentCounts();
  void sortingOrdersRowsAndKeepsTheSelection();
  void refreshAddsCommittedRowsWithoutAReset();
  void refreshInsertsIntoASortedView();
  void refreshOpensAJobCreatedAfterItsPathWasSet();
  void panelFiltersAndShowsTheSelectedRow();
  void panelRefreshShowsNewRowsAndTheRetriedRow();
  void runRowAloneShowsTheAnswer();
  void columnsFitTheWidthAndWidthsAreRemembered();
  void detailPaneGivesTheOutputRoom();
  void detailPaneClearsWhenTheFilterHidesItsRow();
  void detailPaneFoldsTheReasoning();
  void summarySaysRowOrRows();
  void twoSamplesShowBothLengths();
  void aLockedJobNeverBlocksTheGuiThread();
  void aSupersededViewNeverLands();

 private:
  std::unique_ptr<ResultsModel> testedModel();

  QTemporaryDir m_dir;
  QString m_jobPath;
};

void ResultsTest::initTestCase() {
  // QSettings (column widths, the split) go to a test location, never the user's settings.
  QStandardPaths::setTestModeEnabled(true);
  QSettings().remove("results");
  QVERIFY(m_dir.isValid());
  m_jobPath = m_dir.filePath("results.sluicejob");
  QElapsedTimer timer;
  timer.start();
  writeJob(m_jobPath, range(0, kNumRows));
  qInfo("wrote %d rows in %lld ms", kNumRows, timer.elapsed());
}

std::unique_ptr<ResultsModel> ResultsTest::testedModel() {
  auto model = std::make_unique<ResultsModel>();
  new QAbstractItemModelTester(model.get(), QAbstractItemModelTester::FailureReportingMode::QtTest,
                               model.get());
  return model;
}

void ResultsTest::modelShowsTheStoredRows() {
  auto model = testedModel();
  QElapsedTimer timer;
  timer.start();
  QVERIFY(openJob(*model, m_jobPath));
  qInfo("opened %d rows in %lld ms", model->rowCount(), timer.elapsed());
  QCOMPARE(model->rowCount(), kNumRows);
  QCOMPARE(model->columnCount(), int(ResultsModel::NumColumns));
  // A row whose page has not been read shows a placeholder, and its page is read on the reader.
  QVERIFY(!model->isRowRead(kNumRows - 1));
  QCOMPARE(model->index(kNumRows - 1, ResultsModel::PromptColumn).data().toString(),
           ResultsModel::placeholderText());
  QVERIFY(model->isBusy());
  const QLocale locale;
  for (const int64_t i :
       {int64_t{0}, int64_t{1}, int64_t{3}, int64_t{97}, int64_t{392}, int64_t{kNumRows - 1}}) {
    const int row = static_cast<int>(i);  // unsorted, unfiltered: view row = row index
    const RowResult expected = makeRow(i);
    const auto cell = [&](int column) { return cellText(*model, row, column); };
    QCOMPARE(model->rowIndexAt(row), i);
    QCOMPARE(cell(ResultsModel::IdColumn),
             i % 5 != 0 ? QString("q-%1").arg(i) : QString::number(i));
    QCOMPARE(cell(ResultsModel::StatusColumn), QString(sluice::to_string(expected.status)));
    QCOMPARE(cell(ResultsModel::PromptColumn), expectedHead(expected.prompt));
    QCOMPARE(cell(ResultsModel::OutputColumn), expectedHead(expected.samples[0].output));
    // Says which number is which: "17 in · 203 out", never "17 / 203" (read as "17 of 203");
    // every sample's length (row 0 has two samples).
    QString outputTokens = locale.toString(expected.samples[0].output_tokens);
    if (expected.samples.size() == 2)
      outputTokens += " · " + locale.toString(expected.samples[1].output_tokens);
    QCOMPARE(cell(ResultsModel::TokensColumn),
             QString("%1 in · %2 out").arg(locale.toString(expected.prompt_tokens), outputTokens));
    QCOMPARE(cell(ResultsModel::TimeColumn), locale.toString(expected.total_ms, 'f', 1));
    QCOMPARE(cell(ResultsModel::FinishReasonColumn),
             QString::fromStdString(expected.samples[0].finish_reason));
  }
  // A failed row shows its error where the output would be; a skipped row has no numbers.
  QCOMPARE(cellText(*model, 5, ResultsModel::OutputColumn),
           QString::fromStdString(makeRow(5).error));
  QCOMPARE(cellText(*model, 11, ResultsModel::StatusColumn), QString("skipped"));
  QCOMPARE(cellText(*model, 11, ResultsModel::TokensColumn), QString());
  QCOMPARE(model->rowIndexAt(-1), qint64(-1));
  QCOMPARE(model->rowIndexAt(kNumRows), qint64(-1));
  QSignalSpy errors(model.get(), &ResultsModel::errorOccurred);
  QVERIFY(!openJob(*model, m_dir.filePath("missing.sluicejob")));
  QCOMPARE(errors.count(), 1);
  QCOMPARE(model->rowCount(), 0);
}

void ResultsTest::filtersMatchIndependentCounts() {
  auto model = testedModel();
  QVERIFY(openJob(*model, m_jobPath));
  for (const RowStatus status : {RowStatus::Done, RowStatus::Failed, RowStatus::Skipped}) {
    model->setStatusFilter(status);
    QVERIFY(settled(*model));
    QCOMPARE(model->rowCount(), countRows([&](int64_t i) { return statusOf(i) == status; }));
    QCOMPARE(readCell(*model, 0, 0, ResultsModel::StatusRole).toString(),
             QString(sluice::to_string(status)));
  }
  model->setStatusFilter(std::nullopt);
  QVERIFY(settled(*model));
  QCOMPARE(model->rowCount(), kNumRows);
  for (const char* search : {"needleword", "NeedleWord", "日本語", "second SAMPLE", "too long"}) {
    QElapsedTimer timer;
    timer.start();
    model->setSearchText(QString::fromUtf8(search));
    QVERIFY(settled(*model));
    qInfo("search \"%s\": %d rows in %lld ms", search, model->rowCount(), timer.elapsed());
    QCOMPARE(model->rowCount(), countRows([&](int64_t i) { return rowMatches(i, search); }));
  }
  model->setStatusFilter(RowStatus::Done);
  model->setSearchText("needleword");
  QVERIFY(settled(*model));
  QCOMPARE(model->rowCount(), countRows([](int64_t i) {
             return statusOf(i) == RowStatus::Done && rowMatches(i, "needleword");
           }));
  for (int row = 0; row < model->rowCount(); ++row)
    QVERIFY(rowMatches(model->rowIndexAt(row), "needleword"));
}

void ResultsTest::sortingOrdersRowsAndKeepsTheSelection() {
  auto model = testedModel();
  QVERIFY(openJob(*model, m_jobPath));
  model->setStatusFilter(RowStatus::Done);
  QVERIFY(settled(*model));
  const QPersistentModelIndex selected = model->index(100, ResultsModel::PromptColumn);
  const qint64 selectedRow = model->rowIndexAt(100);
  QSignalSpy resets(model.get(), &ResultsModel::modelReset);

  model->sort(ResultsModel::TokensColumn, Qt::DescendingOrder);
  QVERIFY(settled(*model));
  QCOMPARE(resets.count(), 0);  // a layout change: persistent indexes follow their rows
  QVERIFY(selected.isValid());
  QCOMPARE(model->rowIndexAt(selected.row()), selectedRow);
  QCOMPARE(selected.column(), int(ResultsModel::PromptColumn));
  // By the longest sample: a row of two samples sorts by the longer one.
  const auto longest = [](int64_t i) {
    const RowResult row = makeRow(i);
    int tokens = 0;
    for (const SampleResult& sample : row.samples) tokens = std::max(tokens, sample.output_tokens);
    return tokens;
  };
  QVERIFY(outputTokensOf(200) < 6 && longest(200) == 6);  // the rule is seen in this job
  for (int row = 1; row < model->rowCount(); ++row) {
    const int64_t before = model->rowIndexAt(row - 1);
    const int64_t after = model->rowIndexAt(row);
    QVERIFY(longest(before) > longest(after) ||
            (longest(before) == longest(after) && before > after));
  }
  model->sort(ResultsModel::TimeColumn, Qt::AscendingOrder);
  QVERIFY(settled(*model));
  for (int row = 1; row < model->rowCount(); ++row) {
    const int64_t before = model->rowIndexAt(row - 1);
    const int64_t after = model->rowIndexAt(row);
    QVERIFY(totalMsOf(before) < totalMsOf(after) ||
            (totalMsOf(before) == totalMsOf(after) && before < after));
  }
  QCOMPARE(model->rowIndexAt(selected.row()), selectedRow);
  model->sort(ResultsModel::IdColumn, Qt::AscendingOrder);  // back to row order
  QVERIFY(settled(*model));
  QCOMPARE(model->rowIndexAt(0), qint64(0));
}

void ResultsTest::refreshAddsCommittedRowsWithoutAReset() {
  // A job still running: rows 0..1999 with every 10th missing (long rows finish late).
  const QString path = m_dir.filePath("running.sluicejob");
  std::vector<int64_t> early;
  for (int64_t i = 0; i < 2000; ++i) {
    if (i % 10 != 9) early.push_back(i);
  }
  writeJob(path, early);
  auto model = testedModel();
  QVERIFY(openJob(*model, path));
  QCOMPARE(model->rowCount(), 1800);
  QSignalSpy refreshes(model.get(), &ResultsModel::refreshed);
  model->refresh();
  QVERIFY(refreshes.wait(kReadTimeoutMs));
  QCOMPARE(refreshes.last().first().toBool(), false);  // nothing committed: nothing to do
  QStringList before;
  for (int row = 0; row < 50; ++row) before << cellText(*model, row, ResultsModel::OutputColumn);
  const QPersistentModelIndex selected = model->index(500, 0);
  const qint64 selectedRow = model->rowIndexAt(500);

  QSignalSpy resets(model.get(), &ResultsModel::modelReset);
  QSignalSpy inserts(model.get(), &ResultsModel::rowsInserted);
  {
    auto store = JobStore::open(path.toStdString());
    for (int64_t i = 2000; i < 2300; ++i) store->add_result(makeRow(i));  // appended
    store->add_result(makeRow(9));                                        // late, in the middle
    store->add_result(makeRow(1009));
    store->flush();
  }
  QElapsedTimer timer;
  timer.start();
  model->refresh();
  QVERIFY(refreshes.wait(kReadTimeoutMs));
  QCOMPARE(refreshes.last().first().toBool(), true);
  qInfo("refresh with 302 new rows: %lld ms", timer.elapsed());
  QCOMPARE(resets.count(), 0);
  QCOMPARE(inserts.count(), 3);  // row 9, row 1009, then the appended block
  QCOMPARE(model->rowCount(), 1800 + 300 + 2);
  QCOMPARE(model->rowIndexAt(9), qint64(9));
  QCOMPARE(model->rowIndexAt(model->rowCount() - 1), qint64(2299));
  QCOMPARE(model->rowIndexAt(selected.row()), selectedRow);  // the selection follows its row
  for (int row = 0; row < 9; ++row)
    QCOMPARE(cellText(*model, row, ResultsModel::OutputColumn), before[row]);
  for (int row = 10; row < 50; ++row)
    QCOMPARE(cellText(*model, row, ResultsModel::OutputColumn), before[row - 1]);
}

void ResultsTest::refreshInsertsIntoASortedView() {
  const QString path = m_dir.filePath("running-sorted.sluicejob");
  writeJob(path, range(0, 2300));
  auto model = testedModel();
  QVERIFY(openJob(*model, path));
  QSignalSpy resets(model.get(), &ResultsModel::modelReset);
  QSignalSpy refreshes(model.get(), &ResultsModel::refreshed);
  // Sorted by tokens, new rows land at their sorted places, without a reset...
  model->sort(ResultsModel::TokensColumn, Qt::AscendingOrder);
  QVERIFY(settled(*model));
  {
    auto store = JobStore::open(path.toStdString());
    for (int64_t i = 2300; i < 2320; ++i) store->add_result(makeRow(i));
  }
  model->refresh();
  QVERIFY(refreshes.wait(kReadTimeoutMs));
  QCOMPARE(refreshes.last().first().toBool(), true);
  QCOMPARE(resets.count(), 0);
  QCOMPARE(model->rowCount(), 2300 + 20);
  const auto sortKey = [](int64_t i) {
    // Rows without samples have no output tokens: they sort first; two samples, the longer.
    const int tokens = i % 50 == 0 ? std::max(outputTokensOf(i), 6) : outputTokensOf(i);
    return std::pair{statusOf(i) == RowStatus::Done ? tokens : -1, i};
  };
  for (int row = 1; row < model->rowCount(); ++row)
    QVERIFY(sortKey(model->rowIndexAt(row - 1)) < sortKey(model->rowIndexAt(row)));
  // ... unless they land in so many places that a reset is cheaper.
  {
    auto store = JobStore::open(path.toStdString());
    for (int64_t i = 2320; i < 2520; ++i) store->add_result(makeRow(i));
  }
  model->refresh();
  QVERIFY(refreshes.wait(kReadTimeoutMs));
  QCOMPARE(model->rowCount(), 2300 + 20 + 200);
}

void ResultsTest::refreshOpensAJobCreatedAfterItsPathWasSet() {
  const QString path = m_dir.filePath("later.sluicejob");
  auto model = testedModel();
  QSignalSpy errors(model.get(), &ResultsModel::errorOccurred);
  QVERIFY(!openJob(*model, path));
  QCOMPARE(errors.count(), 1);
  QVERIFY(errors.first().first().toString().contains("later.sluicejob"));
  QSignalSpy refreshes(model.get(), &ResultsModel::refreshed);
  model->refresh();
  QCOMPARE(refreshes.count(), 1);  // still no file: nothing to read
  QCOMPARE(refreshes.first().first().toBool(), false);
  writeJob(path, range(0, 40));
  QSignalSpy opened(model.get(), &ResultsModel::jobOpened);
  model->refresh();
  QVERIFY(opened.wait(kReadTimeoutMs));
  QCOMPARE(model->rowCount(), 40);
  QCOMPARE(model->jobPath(), path);
}

void ResultsTest::panelFiltersAndShowsTheSelectedRow() {
  ResultsPanel panel;
  panel.resize(1200, 700);
  panel.show();
  panel.setJobPath(m_jobPath);
  QVERIFY(settled(*panel.model()));
  QCOMPARE(panel.model()->rowCount(), kNumRows);
  QVERIFY(panel.errorText().isEmpty());

  panel.statusFilter()->setCurrentIndex(2);  // failed
  QVERIFY(settled(*panel.model()));
  QCOMPARE(panel.model()->rowCount(),
           countRows([](int64_t i) { return statusOf(i) == RowStatus::Failed; }));
  panel.statusFilter()->setCurrentIndex(0);
  QVERIFY(settled(*panel.model()));
  const int numMatches = countRows([](int64_t i) { return rowMatches(i, "needleword"); });
  panel.searchEdit()->setText("needleword");  // applied once typing pauses
  QCOMPARE(panel.model()->rowCount(), kNumRows);
  QTRY_COMPARE_WITH_TIMEOUT(panel.model()->rowCount(), numMatches, 5000);
  panel.searchEdit()->clear();
  QTRY_COMPARE_WITH_TIMEOUT(panel.model()->rowCount(), kNumRows, 5000);

  // Row 50 has two samples.
  panel.tableView()->selectRow(50);
  const RowResult expected = makeRow(50);
  QTRY_COMPARE_WITH_TIMEOUT(panel.detailPane()->rowIndex(), qint64(50), kReadTimeoutMs);
  QCOMPARE(panel.detailPane()->promptText(), QString::fromStdString(expected.prompt));
  const QStringList samples = panel.detailPane()->sampleTexts();
  QCOMPARE(samples.size(), 2);
  QCOMPARE(samples[0], QString::fromStdString(expected.samples[0].output));
  QCOMPARE(samples[1], QString::fromStdString(expected.samples[1].output));
  const QStringList titles = panel.detailPane()->sampleTitles();
  QVERIFY2(titles[0].contains(QString::number(expected.samples[0].output_tokens)),
           qPrintable(titles[0]));
  QVERIFY2(titles[0].contains(QString::fromStdString(expected.samples[0].finish_reason)),
           qPrintable(titles[0]));
  const QString facts = panel.detailPane()->factsText();
  QVERIFY2(facts.contains(QString("Prompt tokens: %1").arg(expected.prompt_tokens)),
           qPrintable(facts));
  QVERIFY2(facts.contains(QString("Seed: %1").arg(expected.seed)), qPrintable(facts));
  QVERIFY2(facts.contains("tokens/s"), qPrintable(facts));
  QVERIFY(panel.detailPane()->errorText().isEmpty());

  panel.tableView()->selectRow(5);  // failed
  QTRY_COMPARE_WITH_TIMEOUT(panel.detailPane()->errorText(),
                            QString::fromStdString(makeRow(5).error), kReadTimeoutMs);
  QVERIFY(panel.detailPane()->sampleTexts().isEmpty());
}

void ResultsTest::panelRefreshShowsNewRowsAndTheRetriedRow() {
  const QString path = m_dir.filePath("panel-running.sluicejob");
  writeJob(path, range(0, 300));
  ResultsPanel panel;
  panel.setJobPath(path);
  QVERIFY(settled(*panel.model()));
  QCOMPARE(panel.model()->rowCount(), 300);
  panel.tableView()->selectRow(5);  // failed
  QTRY_COMPARE_WITH_TIMEOUT(panel.detailPane()->errorText(),
                            QString::fromStdString(makeRow(5).error), kReadTimeoutMs);
  {
    auto store = JobStore::open(path.toStdString());
    for (int64_t i = 300; i < 400; ++i) store->add_result(makeRow(i));
    RowResult retried = makeRow(6);  // row 5 retried and done this time
    retried.row_index = 5;
    store->add_result(retried);
  }
  panel.refresh();
  QTRY_COMPARE_WITH_TIMEOUT(panel.model()->rowCount(), 400, 5000);
  QCOMPARE(panel.tableView()->currentIndex().row(), 5);
  QCOMPARE(panel.detailPane()->rowIndex(), qint64(5));
  QTRY_VERIFY_WITH_TIMEOUT(panel.detailPane()->errorText().isEmpty(), kReadTimeoutMs);
  QCOMPARE(panel.detailPane()->sampleTexts(),
           QStringList{QString::fromStdString(makeRow(6).samples[0].output)});
  QCOMPARE(cellText(*panel.model(), 5, ResultsModel::StatusColumn), QString("done"));
  QCOMPARE(panel.summaryText(), QString("%1 rows").arg(QLocale().toString(400)));
}

void ResultsTest::runRowAloneShowsTheAnswer() {
  ResultsPanel panel;
  panel.setJobPath(m_jobPath);
  QVERIFY(settled(*panel.model()));
  panel.tableView()->selectRow(12);
  QSignalSpy requests(&panel, &ResultsPanel::rowAloneRequested);
  QPushButton* button = panel.detailPane()->runAloneButton();
  QTRY_VERIFY_WITH_TIMEOUT(button->isEnabled(), kReadTimeoutMs);
  button->click();
  QCOMPARE(requests.count(), 1);
  QCOMPARE(requests.first().first().toLongLong(), qint64(12));
  QVERIFY(!button->isEnabled());  // until the answer comes
  panel.showRowAloneResult(12, true, QString());
  QVERIFY2(panel.detailPane()->rowAloneText().contains("Identical"),
           qPrintable(panel.detailPane()->rowAloneText()));
  QVERIFY(button->isEnabled());
  panel.showRowAloneResult(12, false, "sample 1 differs at token 7: \"cat\" vs \"dog\"");
  const QString text = panel.detailPane()->rowAloneText();
  QVERIFY2(text.contains("Different") && text.contains("sample 1 differs at token 7"),
           qPrintable(text));
  // The answer stays with its row.
  panel.tableView()->selectRow(13);
  QTRY_COMPARE_WITH_TIMEOUT(panel.detailPane()->rowIndex(), qint64(13), kReadTimeoutMs);
  QVERIFY(panel.detailPane()->rowAloneText().isEmpty());
  panel.tableView()->selectRow(12);
  QTRY_COMPARE_WITH_TIMEOUT(panel.detailPane()->rowIndex(), qint64(12), kReadTimeoutMs);
  QVERIFY(panel.detailPane()->rowAloneText().contains("Different"));
}

// The right edge of column in the table's viewport.
int columnRightEdge(const QTableView& view, int column) {
  return view.horizontalHeader()->sectionViewportPosition(column) + view.columnWidth(column);
}

void ResultsTest::columnsFitTheWidthAndWidthsAreRemembered() {
  QSettings().remove("results");
  // About the Results tab's size in a 1280x720 window beside the setup panels, then 1920x1080.
  for (const QSize size : {QSize(820, 520), QSize(1450, 850)}) {
    ResultsPanel panel;
    panel.resize(size);
    panel.show();
    panel.setJobPath(m_jobPath);
    QVERIFY(settled(*panel.model()));
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    const QTableView& view = *panel.tableView();
    const int viewportWidth = view.viewport()->width();
    // Time and Finish are in sight, and no width is left empty: the text columns take it.
    QVERIFY2(columnRightEdge(view, ResultsModel::TimeColumn) <= viewportWidth,
             qPrintable(QString::number(columnRightEdge(view, ResultsModel::TimeColumn))));
    QCOMPARE(columnRightEdge(view, ResultsModel::FinishReasonColumn), viewportWidth);
    QVERIFY(view.columnWidth(ResultsModel::PromptColumn) >= 150);
    QVERIFY(view.columnWidth(ResultsModel::OutputColumn) >= 150);
    const int fixedWidth = viewportWidth - view.columnWidth(ResultsModel::PromptColumn) -
                           view.columnWidth(ResultsModel::OutputColumn);
    // The wider window gives its extra width to Prompt and Output, not to the other columns.
    QVERIFY2(fixedWidth < 600, qPrintable(QString::number(fixedWidth)));
  }
  // A width the user sets comes back in the next panel (the next session).
  int userWidth = 0;
  {
    ResultsPanel panel;
    panel.resize(1200, 600);
    panel.show();
    userWidth = panel.tableView()->columnWidth(ResultsModel::IdColumn) + 37;
    panel.tableView()->horizontalHeader()->resizeSection(ResultsModel::IdColumn, userWidth);
  }
  ResultsPanel next;
  QCOMPARE(next.tableView()->columnWidth(ResultsModel::IdColumn), userWidth);
  QSettings().remove("results");
}

void ResultsTest::detailPaneGivesTheOutputRoom() {
  QSettings().remove("results");
  ResultsPanel panel;
  panel.resize(820, 520);  // the Results tab in a 1280x720 window
  panel.show();
  panel.setJobPath(m_jobPath);
  QVERIFY(settled(*panel.model()));
  QVERIFY(QTest::qWaitForWindowExposed(&panel));
  panel.tableView()->selectRow(3);
  QTRY_COMPARE_WITH_TIMEOUT(panel.detailPane()->rowIndex(), qint64(3), kReadTimeoutMs);
  QPlainTextEdit* output = panel.detailPane()->sampleView(0);
  QVERIFY(output);
  QTRY_VERIFY(output->isVisible());
  const int numLines = output->viewport()->height() / output->fontMetrics().lineSpacing();
  QVERIFY2(numLines >= 8, qPrintable(QString("%1 lines").arg(numLines)));
}

void ResultsTest::detailPaneClearsWhenTheFilterHidesItsRow() {
  ResultsPanel panel;
  panel.resize(1200, 700);
  panel.show();
  panel.setJobPath(m_jobPath);
  QVERIFY(settled(*panel.model()));
  panel.tableView()->selectRow(5);  // row 5 failed
  QTRY_COMPARE_WITH_TIMEOUT(panel.detailPane()->rowIndex(), qint64(5), kReadTimeoutMs);
  panel.statusFilter()->setCurrentIndex(1);  // done rows only: row 5 is hidden
  QVERIFY(settled(*panel.model()));
  QCOMPARE(panel.detailPane()->rowIndex(), qint64(-1));
  QVERIFY(panel.detailPane()->promptText().isEmpty());
  panel.statusFilter()->setCurrentIndex(2);  // failed rows: row 5 is back
  QVERIFY(settled(*panel.model()));
  panel.tableView()->selectRow(0);
  QTRY_COMPARE_WITH_TIMEOUT(panel.detailPane()->rowIndex(), qint64(5), kReadTimeoutMs);
}

// A sample's reasoning sits closed above its answer, saying how many tokens it took; a click
// opens it. A sample without reasoning is its answer alone, as before.
void ResultsTest::detailPaneFoldsTheReasoning() {
  QSettings().remove("results");
  const QString path = m_dir.filePath("thinking.sluicejob");
  {
    auto store = JobStore::create(path.toStdString(), makeInfo());
    store->add_result(thinkingRow());
    store->add_result(makeRow(1));
    store->flush();
  }
  const RowResult expected = thinkingRow();
  ResultsPanel panel;
  panel.resize(1000, 560);
  panel.show();
  panel.setJobPath(path);
  QVERIFY(settled(*panel.model()));
  QVERIFY(QTest::qWaitForWindowExposed(&panel));
  panel.tableView()->selectRow(0);
  auto* pane = panel.detailPane();
  QTRY_COMPARE_WITH_TIMEOUT(pane->rowIndex(), qint64(0), kReadTimeoutMs);
  QCOMPARE(pane->sampleTexts(), QStringList({"17 × 24 = 408.", "408"}));
  ReasoningFold* fold = pane->reasoningFold(0);
  QVERIFY(fold);
  QVERIFY(!pane->reasoningFold(1));  // answered at once: no fold
  QCOMPARE(fold->headerText(), QString("Reasoning · 61 tokens"));
  // The samples' side of the pane is laid out once the event loop runs.
  QTRY_VERIFY(!fold->headerButton()->visibleRegion().isEmpty());
  QVERIFY(!fold->isExpanded());
  QVERIFY(!fold->textView()->isVisible());
  QVERIFY(pane->sampleView(0)->isVisible());
  const int closedAnswerHeight = pane->sampleView(0)->height();
  QVERIFY(sluice::test::saveShot(panel, "results-reasoning-closed"));

  QTest::mouseClick(fold->headerButton(), Qt::LeftButton);
  QVERIFY(fold->isExpanded());
  QTRY_VERIFY(fold->textView()->isVisible());
  QCOMPARE(fold->reasoningText(), QString::fromStdString(expected.samples[0].reasoning));
  QVERIFY(pane->sampleView(0)->isVisible());  // the answer stays, below the reasoning
  QTRY_VERIFY(pane->sampleView(0)->height() < closedAnswerHeight);
  QVERIFY(fold->textView()->y() < pane->sampleView(0)->mapTo(fold->parentWidget(), QPoint()).y());
  QVERIFY(sluice::test::saveShot(panel, "results-reasoning-open"));
  QTest::mouseClick(fold->headerButton(), Qt::LeftButton);
  QVERIFY(!fold->isExpanded());
  QTRY_VERIFY(!fold->textView()->isVisible());

  // A row without reasoning: each sample's page is its answer's view, as before.
  panel.tableView()->selectRow(1);
  QTRY_COMPARE_WITH_TIMEOUT(pane->rowIndex(), qint64(1), kReadTimeoutMs);
  QVERIFY(!pane->reasoningFold(0));
  QCOMPARE(pane->sampleTexts(),
           QStringList({QString::fromStdString(makeRow(1).samples[0].output)}));
  QVERIFY(pane->findChildren<ReasoningFold*>().isEmpty());
}

void ResultsTest::summarySaysRowOrRows() {
  ResultsPanel panel;
  panel.setJobPath(m_jobPath);
  QVERIFY(settled(*panel.model()));
  // Row 7 is the only one whose prompt holds both "item 7 " and NEEDLEWORD.
  QCOMPARE(countRows([](int64_t i) { return rowMatches(i, "item 7 needleword"); }), 1);
  panel.searchEdit()->setText("item 7 NEEDLEWORD");
  QTRY_COMPARE_WITH_TIMEOUT(panel.summaryText(), QString("1 matching row"), 5000);
  panel.searchEdit()->setText("needleword");
  const int numMatches = countRows([](int64_t i) { return rowMatches(i, "needleword"); });
  QTRY_COMPARE_WITH_TIMEOUT(panel.summaryText(),
                            QString("%1 matching rows").arg(QLocale().toString(numMatches)), 5000);
}

// An n = 2 job: the Tokens cell gives every sample's length, and sorts by the longest sample.
void ResultsTest::twoSamplesShowBothLengths() {
  const QString path = m_dir.filePath("two-samples.sluicejob");
  const std::vector<std::vector<int>> lengths = {{212, 187}, {5, 1300}, {250}};
  {
    auto store = JobStore::create(path.toStdString(), makeInfo());
    for (size_t i = 0; i < lengths.size(); ++i) {
      RowResult row;
      row.row_index = static_cast<int64_t>(i);
      row.line = i + 1;
      row.prompt = "prompt " + std::to_string(i);
      row.prompt_tokens = 10;
      for (const int tokens : lengths[i])
        row.samples.push_back({.output = "out", .output_tokens = tokens, .finish_reason = "stop"});
      store->add_result(row);
    }
    store->flush();
  }
  auto model = testedModel();
  QVERIFY(openJob(*model, path));
  QCOMPARE(cellText(*model, 0, ResultsModel::TokensColumn), QString("10 in · 212 · 187 out"));
  QCOMPARE(cellText(*model, 1, ResultsModel::TokensColumn),
           QString("10 in · 5 · %1 out").arg(QLocale().toString(1300)));
  QCOMPARE(cellText(*model, 2, ResultsModel::TokensColumn), QString("10 in · 250 out"));
  QCOMPARE(readCell(*model, 0, ResultsModel::TokensColumn, Qt::ToolTipRole).toString(),
           QString("sample 1: 212 tokens\nsample 2: 187 tokens"));
  // Longest sample: 212, 250, 1,300 (sample 1 alone would give 5, 212, 250).
  model->sort(ResultsModel::TokensColumn, Qt::AscendingOrder);
  QVERIFY(settled(*model));
  QCOMPARE(model->rowIndexAt(0), qint64(0));
  QCOMPARE(model->rowIndexAt(1), qint64(2));
  QCOMPARE(model->rowIndexAt(2), qint64(1));

  // The table as a person sees it, sorted by the longest sample, in both palettes.
  ResultsPanel panel;
  panel.resize(1240, 420);  // the Results tab in a 1280x720 window
  panel.show();
  panel.setJobPath(path);
  QVERIFY(QTest::qWaitForWindowExposed(&panel));
  panel.tableView()->horizontalHeader()->setSortIndicator(ResultsModel::TokensColumn,
                                                          Qt::DescendingOrder);
  QVERIFY(settled(*panel.model()));
  QCOMPARE(cellText(*panel.model(), 0, ResultsModel::TokensColumn),
           QString("10 in · 5 · %1 out").arg(QLocale().toString(1300)));
  panel.tableView()->selectRow(0);
  QTRY_COMPARE_WITH_TIMEOUT(panel.detailPane()->rowIndex(), qint64(1), kReadTimeoutMs);
  QVERIFY(sluice::test::saveShot(panel, "results-two-samples"));
  QVERIFY(sluice::ui::applyPaletteNamed("dark"));
  QTRY_VERIFY(panel.palette().color(QPalette::Window).lightness() < 128);  // delivered
  QVERIFY(sluice::test::saveShot(panel, "results-two-samples-dark"));
  QVERIFY(sluice::ui::applyPaletteNamed("light"));
}

// A job file locked by another process: opening it, asking for its rows and its pages never
// makes the GUI thread wait (SQLite's busy timeout is seconds); the rows show once it is free.
void ResultsTest::aLockedJobNeverBlocksTheGuiThread() {
  const QString path = m_dir.filePath("locked.sluicejob");
  writeJob(path, range(0, 1000));
  auto lock = std::make_unique<sluice::test::LockedJobFile>(path.toStdString());
  ResultsPanel panel;
  panel.resize(1000, 600);
  panel.show();
  QVERIFY(QTest::qWaitForWindowExposed(&panel));
  ResultsModel* model = panel.model();
  // The event loop's pulse: the longest gap between ticks of a 5 ms timer while the lock holds.
  QElapsedTimer sinceTick;
  qint64 longestGapMs = 0;
  QTimer pulse;
  pulse.setInterval(5);
  connect(&pulse, &QTimer::timeout, &pulse,
          [&] { longestGapMs = std::max(longestGapMs, sinceTick.restart()); });
  QElapsedTimer call;
  call.start();
  sinceTick.start();
  pulse.start();
  panel.setJobPath(path);
  panel.refresh();
  panel.tableView()->viewport()->repaint();  // asks for the cells it shows
  QVERIFY2(call.elapsed() < 50, qPrintable(QString("setJobPath took %1 ms").arg(call.elapsed())));
  QTest::qWait(400);  // the lock holds: the reader waits, the GUI thread must not
  pulse.stop();
  QVERIFY2(longestGapMs < 50,
           qPrintable(QString("the event loop stalled for %1 ms").arg(longestGapMs)));
  QVERIFY(model->isBusy());
  QCOMPARE(model->rowCount(), 0);  // nothing read yet
  QCOMPARE(panel.summaryText(), QString("Reading the job…"));
  lock->release();
  QTRY_COMPARE_WITH_TIMEOUT(model->rowCount(), 1000, kReadTimeoutMs);
  // The pages the view asked for arrive and fill the placeholders in.
  QTRY_COMPARE_WITH_TIMEOUT(model->index(0, ResultsModel::PromptColumn).data().toString(),
                            expectedHead(makeRow(0).prompt), kReadTimeoutMs);
  QVERIFY(panel.errorText().isEmpty());
  QCOMPARE(panel.summaryText(), QString("%1 rows").arg(QLocale().toString(1000)));
}

// Filters changed faster than the reader answers: only the last view is shown, once; the reads
// of the views it superseded are dropped (or skipped before they start).
void ResultsTest::aSupersededViewNeverLands() {
  auto model = testedModel();
  QVERIFY(openJob(*model, m_jobPath));
  QVERIFY(settled(*model));
  QSignalSpy resets(model.get(), &ResultsModel::modelReset);
  model->setStatusFilter(RowStatus::Failed);
  model->setSearchText("needleword");
  model->setStatusFilter(RowStatus::Skipped);
  model->setSearchText(QString());
  QVERIFY(settled(*model));
  QCOMPARE(resets.count(), 1);
  QCOMPARE(model->rowCount(),
           countRows([](int64_t i) { return statusOf(i) == RowStatus::Skipped; }));
  QCOMPARE(cellText(*model, 0, ResultsModel::StatusColumn), QString("skipped"));
}

QTEST_MAIN(ResultsTest)
#include "results_test.moc"
