// The Valid column on the validity stored per row (issue 32 item 5): it sorts (✗, ✓, then rows
// without a verdict, and the reverse) and filters (the panel's All / Valid / Invalid control) in
// the job's SQL, with nothing checked on the GUI thread; rows stored before validity was kept still
// show (their check, made on the pool, is shown only); and the export dialog's "Leave out invalid
// rows", enabled only for a job with a grammar, leaves them out of the written file.
#include <QAbstractItemModelTester>
#include <QCheckBox>
#include <QComboBox>
#include <QFile>
#include <QHeaderView>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QtTest>
#include <memory>
#include <string>
#include <vector>

#include "app/generation_spec.h"
#include "engine/grammar/grammar_source.h"
#include "engine/jobs/job_store.h"
#include "tests/gui/gui_shots.h"
#include "tests/gui/results_model_reads.h"
#include "ui/results/export_dialog.h"
#include "ui/results/results_model.h"
#include "ui/results/results_panel.h"

using sluice::RowResult;
using sluice::RowStatus;
using sluice::RowValidity;
using sluice::SampleResult;
using sluice::ui::ExportDialog;
using sluice::ui::ResultsModel;
using sluice::ui::ResultsPanel;

namespace {

SampleResult storedSample(const std::string& output, std::optional<bool> valid) {
  SampleResult sample;
  sample.output = output;
  sample.output_tokens = 6;
  sample.finish_reason = "stop";
  sample.valid = valid;
  if (valid == false) sample.invalid_reason = "missing property 'a'";
  return sample;
}

RowResult rowOf(int64_t index, std::vector<SampleResult> samples) {
  RowResult row;
  row.row_index = index;
  row.line = static_cast<size_t>(index) + 1;
  row.prompt = "question " + std::to_string(index);
  row.samples = std::move(samples);
  return row;
}

// Writes a job with a JSON Schema grammar (or free text) whose rows are, by index:
//   0 ✓   1 ✗   2 stored before validity was kept (its output is valid)   3 failed
//   4 ✗ (two samples, the second invalid)   5 ✓ (two valid samples)
void writeStoredValidityJob(const QString& path, bool hasGrammar) {
  sluice::GenerationSpec spec;
  if (hasGrammar) {
    spec.sampling.grammar = std::make_shared<const sluice::GrammarSource>(sluice::GrammarSource{
        sluice::GrammarSourceKind::JsonSchema,
        "s.json",
        R"({"type":"object","properties":{"a":{"type":"string"}},"required":["a"]})",
        {}});
  }
  sluice::JobInfo info;
  info.source_path = "/data/q.jsonl";
  info.source_format = "jsonl";
  info.model_path = "/models/tiny.gguf";
  info.params = sluice::spec_to_json(spec);
  auto store = sluice::JobStore::create(path.toStdString(), info);
  store->add_result(rowOf(0, {storedSample(R"({"a": "zero"})", true)}));
  store->add_result(rowOf(1, {storedSample(R"({"b": 1})", false)}));
  store->add_result(rowOf(2, {storedSample(R"({"a": "legacy"})", std::nullopt)}));
  RowResult failed = rowOf(3, {});
  failed.status = RowStatus::Failed;
  failed.error = "row 3 failed: the prompt is too long";
  store->add_result(failed);
  store->add_result(rowOf(4, {storedSample(R"({"a": "four"})", true), storedSample("{", false)}));
  store->add_result(
      rowOf(5, {storedSample(R"({"a": "five"})", true), storedSample(R"({"a": "5"})", true)}));
  store->flush();
}

// The cell once its page has been read (the row's own validity check may still be on its way).
QString validityCell(const ResultsModel& model, int row) {
  return sluice::gui_test::cellText(model, row, ResultsModel::ValidColumn);
}

std::vector<qint64> shownRowIndices(const ResultsModel& model) {
  std::vector<qint64> indices;
  for (int row = 0; row < model.rowCount(); ++row) indices.push_back(model.rowIndexAt(row));
  return indices;
}

}  // namespace

class ResultsValidityTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }
  void cellsShowTheStoredValidity();
  void modelSortsByValidity();
  void modelFiltersByValidity();
  void panelFilterControlFiltersTheTable();
  void exportLeavesOutInvalidRows();

 private:
  QTemporaryDir m_dir;
};

void ResultsValidityTest::cellsShowTheStoredValidity() {
  const QString job = m_dir.filePath("cells.sluicejob");
  writeStoredValidityJob(job, true);
  ResultsModel model;
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
  QVERIFY(sluice::gui_test::openJob(model, job));
  QCOMPARE(model.rowCount(), 6);
  // Stored verdicts show with their page, before any check on the pool; only the row stored
  // without one waits for the pool's check; row 4 has one invalid sample of two.
  QCOMPARE(sluice::gui_test::textsAtPageArrival(model, ResultsModel::ValidColumn, 6),
           QStringList({"✓", "✗", "…", "", "✗", "✓"}));
  QVERIFY(model.isCheckingValidity());
  QTRY_VERIFY_WITH_TIMEOUT(!model.isCheckingValidity(), 10000);
  QCOMPARE(validityCell(model, 2), QString("✓"));
  QVERIFY(model.data(model.index(2, ResultsModel::ValidColumn), Qt::ToolTipRole)
              .toString()
              .contains("stored before validity was kept"));
}

void ResultsValidityTest::modelSortsByValidity() {
  const QString job = m_dir.filePath("sort.sluicejob");
  writeStoredValidityJob(job, true);
  ResultsModel model;
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
  QVERIFY(sluice::gui_test::openJob(model, job));
  // ✗ first, then ✓, then rows without a verdict (the legacy row 2 and the failed row 3) in row
  // order; descending is the exact reverse.
  model.sort(ResultsModel::ValidColumn, Qt::AscendingOrder);
  QVERIFY(sluice::gui_test::settled(model));
  QCOMPARE(shownRowIndices(model), (std::vector<qint64>{1, 4, 0, 5, 2, 3}));
  QCOMPARE(validityCell(model, 0), QString("✗"));
  model.sort(ResultsModel::ValidColumn, Qt::DescendingOrder);
  QVERIFY(sluice::gui_test::settled(model));
  QCOMPARE(shownRowIndices(model), (std::vector<qint64>{3, 2, 5, 0, 4, 1}));
  QCOMPARE(validityCell(model, 5), QString("✗"));
}

void ResultsValidityTest::modelFiltersByValidity() {
  const QString job = m_dir.filePath("filter.sluicejob");
  writeStoredValidityJob(job, true);
  ResultsModel model;
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
  QVERIFY(sluice::gui_test::openJob(model, job));
  model.setValidityFilter(RowValidity::Valid);
  QVERIFY(sluice::gui_test::settled(model));
  QCOMPARE(shownRowIndices(model), (std::vector<qint64>{0, 5}));
  model.setValidityFilter(RowValidity::Invalid);
  QVERIFY(sluice::gui_test::settled(model));
  QCOMPARE(shownRowIndices(model), (std::vector<qint64>{1, 4}));
  model.setStatusFilter(RowStatus::Failed);  // filters combine: no failed row has a verdict
  QVERIFY(sluice::gui_test::settled(model));
  QCOMPARE(model.rowCount(), 0);
  model.setStatusFilter(std::nullopt);
  model.setValidityFilter(std::nullopt);
  QVERIFY(sluice::gui_test::settled(model));
  QCOMPARE(model.rowCount(), 6);  // rows without a verdict show under All
}

void ResultsValidityTest::panelFilterControlFiltersTheTable() {
  const QString job = m_dir.filePath("panel.sluicejob");
  writeStoredValidityJob(job, true);
  ResultsPanel panel;
  panel.resize(1100, 520);
  panel.setJobPath(job);
  QVERIFY(sluice::gui_test::settled(*panel.model()));
  QComboBox* filter = panel.validityFilter();
  QVERIFY(filter->isVisibleTo(&panel));
  QVERIFY(!panel.tableView()->isColumnHidden(ResultsModel::ValidColumn));
  // Chosen from the control, as a person does: keys on the focused combo box.
  panel.show();
  QVERIFY(QTest::qWaitForWindowExposed(&panel));
  filter->setFocus();
  QTest::keyClick(filter, Qt::Key_Down);  // All outputs -> Valid
  QCOMPARE(filter->currentText(), QString("Valid"));
  QVERIFY(sluice::gui_test::settled(*panel.model()));
  QCOMPARE(shownRowIndices(*panel.model()), (std::vector<qint64>{0, 5}));
  QCOMPARE(panel.summaryText(), QString("2 matching rows"));
  QTest::keyClick(filter, Qt::Key_Down);  // -> Invalid
  QCOMPARE(filter->currentText(), QString("Invalid"));
  QVERIFY(sluice::gui_test::settled(*panel.model()));
  QCOMPARE(shownRowIndices(*panel.model()), (std::vector<qint64>{1, 4}));
  // The header sorts by the column: descending puts ✓ above ✗ (row 4 before row 1 is the row
  // order reversed within ✗).
  panel.tableView()->horizontalHeader()->setSortIndicator(ResultsModel::ValidColumn,
                                                          Qt::DescendingOrder);
  QCOMPARE(panel.tableView()->horizontalHeader()->sortIndicatorSection(),
           int{ResultsModel::ValidColumn});
  QVERIFY(sluice::gui_test::settled(*panel.model()));
  QCOMPARE(shownRowIndices(*panel.model()), (std::vector<qint64>{4, 1}));
  sluice::gui_test::readCell(*panel.model(), 0, 0);  // the page the picture shows
  QCoreApplication::processEvents();                 // the count label's new width is laid out
  QVERIFY(sluice::test::saveShot(panel, "results-validity-invalid"));
  QTest::keyClick(filter, Qt::Key_Up);  // -> Valid, sorted by validity
  QVERIFY(sluice::gui_test::settled(*panel.model()));
  QCOMPARE(shownRowIndices(*panel.model()), (std::vector<qint64>{5, 0}));
  sluice::gui_test::readCell(*panel.model(), 0, 0);  // the page the picture shows
  QCoreApplication::processEvents();                 // the count label's new width is laid out
  QVERIFY(sluice::test::saveShot(panel, "results-validity-valid"));

  // Free text: no verdicts, so no control, and a filter left on is dropped.
  const QString freeJob = m_dir.filePath("panel-free.sluicejob");
  writeStoredValidityJob(freeJob, false);
  panel.setJobPath(freeJob);
  QVERIFY(sluice::gui_test::settled(*panel.model()));
  QVERIFY(!filter->isVisibleTo(&panel));
  QCOMPARE(filter->currentIndex(), 0);
  QCOMPARE(panel.model()->rowCount(), 6);
}

void ResultsValidityTest::exportLeavesOutInvalidRows() {
  const QString job = m_dir.filePath("export.sluicejob");
  writeStoredValidityJob(job, true);
  ExportDialog dialog(job);
  auto* leaveOut = dialog.findChild<QCheckBox*>(QStringLiteral("leaveOutInvalid"));
  QVERIFY(leaveOut);
  QTRY_VERIFY(dialog.hasReadJob());
  QVERIFY(leaveOut->isEnabled());
  QCOMPARE(leaveOut->text(), QString("Leave out invalid rows (2 in this job)"));
  const QString output = m_dir.filePath("valid-only.jsonl");
  dialog.setChoices(output, sluice::ExportFormat::Jsonl, {});
  QVERIFY(!dialog.options().leave_out_invalid);
  dialog.show();
  QVERIFY(QTest::qWaitForWindowExposed(&dialog));
  QTest::mouseClick(leaveOut, Qt::LeftButton);
  QVERIFY(dialog.options().leave_out_invalid);
  QSignalSpy finished(&dialog, &ExportDialog::exportFinished);
  dialog.startExport();
  QVERIFY(finished.wait(10000));
  QVERIFY2(finished.at(0).at(0).toBool(), qPrintable(dialog.resultText()));
  QVERIFY2(dialog.resultText().contains("3 rows left out: 2 invalid, 1 failed"),
           qPrintable(dialog.resultText()));
  QFile file(output);
  QVERIFY(file.open(QIODevice::ReadOnly));
  std::vector<qint64> written;
  while (!file.atEnd()) {
    const QByteArray line = file.readLine();
    const auto record = nlohmann::json::parse(line.toStdString());
    written.push_back(record.at("row_index").get<qint64>());
  }
  QCOMPARE(written, (std::vector<qint64>{0, 2, 5}));  // the failed row 3 is left out as failed

  // Free text has no verdicts: the box stays disabled.
  const QString freeJob = m_dir.filePath("export-free.sluicejob");
  writeStoredValidityJob(freeJob, false);
  ExportDialog freeDialog(freeJob);
  QTRY_VERIFY(freeDialog.hasReadJob());
  QVERIFY(!freeDialog.findChild<QCheckBox*>(QStringLiteral("leaveOutInvalid"))->isEnabled());
}

QTEST_MAIN(ResultsValidityTest)
#include "results_validity_test.moc"
