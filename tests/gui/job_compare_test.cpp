// Compare two jobs: two runs of stories260K over one file at different max_tokens, compared from
// the Jobs tab (two rows selected, Compare…): rows side by side and each job's statistics against
// counts worked out here from the jobs' JSONL exports; jobs over different files are refused with
// a message naming both; the rows model (under QAbstractItemModelTester) reads only the pages
// shown.
#include <QAbstractItemModelTester>
#include <QCheckBox>
#include <QCoreApplication>
#include <QFile>
#include <QItemSelectionModel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "engine/export/exporters.h"
#include "engine/jobs/job_store.h"
#include "tests/support/test_paths.h"
#include "ui/jobs/job_compare_dialog.h"
#include "ui/jobs/job_compare_model.h"
#include "ui/jobs/jobs_model.h"
#include "ui/jobs/jobs_view.h"
#include "ui/live/run_controls.h"
#include "ui/setup/parameters_panel.h"
#include "ui/window/main_window.h"

using sluice::ui::JobCompareDialog;
using sluice::ui::JobCompareModel;
using sluice::ui::MainWindow;

namespace {

QString shared(const char* relative) {
  return QString::fromStdString(sluice::test::shared_path(relative));
}

// Runs the file with max_tokens in window; returns the job's path.
QString runJob(MainWindow& window, int maxTokens) {
  sluice::GenerationSpec spec;
  spec.sampling.max_tokens = maxTokens;
  spec.engine.max_num_seqs = 8;
  window.parametersPanel()->setFromSpec(spec);
  QSignalSpy finished(&window, &MainWindow::runFinished);
  if (!QTest::qWaitFor([&] { return window.runControls()->startButton()->isEnabled(); }, 30000))
    return {};
  QTest::mouseClick(window.runControls()->startButton(), Qt::LeftButton);
  if (!finished.wait(120000)) return {};
  return window.currentJobPath();
}

// The job's rows as `jobs export --format jsonl --include-failed` writes them.
std::vector<nlohmann::json> exportedRows(const QString& job) {
  const std::string out = job.toStdString() + ".jsonl";
  sluice::ExportOptions options;
  options.include_failed = true;
  sluice::export_job(*sluice::JobStore::open(job.toStdString()), sluice::ExportFormat::Jsonl, out,
                     options);
  std::vector<nlohmann::json> rows;
  std::ifstream in(out);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) rows.push_back(nlohmann::json::parse(line));
  return rows;
}

// A job over a hand-made source of num_rows rows.
QString writeJob(const QString& path, const std::string& sourcePath, const std::string& sha256,
                 int num_rows) {
  sluice::JobInfo info;
  info.source_path = sourcePath;
  info.source_sha256 = sha256;
  auto store = sluice::JobStore::create(path.toStdString(), info);
  for (int i = 0; i < num_rows; ++i) {
    sluice::RowResult row;
    row.row_index = i;
    row.prompt = "prompt " + std::to_string(i);
    row.samples.push_back(
        {.output = "out " + std::to_string(i), .output_tokens = 2, .finish_reason = "stop"});
    store->add_result(row);
  }
  store->flush();
  return path;
}

}  // namespace

class JobCompareTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    // Settings of its own (the recent jobs the Jobs tab lists beside its folder): another run of
    // this program at the same time must not add its jobs to this one's list.
    QCoreApplication::setApplicationName(
        QStringLiteral("sluice_gui_job_compare_test-%1").arg(QCoreApplication::applicationPid()));
  }
  void cleanupTestCase() { QFile::remove(QSettings().fileName()); }

  void comparesTwoRunsSideBySideFromTheJobsTab() {
    QTemporaryDir dir;
    // Twelve short prompts; the two runs differ in max_tokens only.
    const QString input = dir.filePath("prompts.jsonl");
    {
      std::ofstream out(input.toStdString());
      for (int i = 0; i < 12; ++i) out << "{\"prompt\": \"Once upon a time " << i << "\"}\n";
    }
    MainWindow window;
    window.setJobsDirectory(dir.filePath("jobs"));
    window.show();
    QSignalSpy ready(&window, &MainWindow::modelReady);
    window.preloadModel(shared("models/stories260K/gguf/stories260K-f32.gguf"));
    QVERIFY(ready.wait(60000));
    window.preloadDataset(input);
    const QString jobA = runJob(window, 6);
    QVERIFY(!jobA.isEmpty());
    const QString jobB = runJob(window, 20);
    QVERIFY(!jobB.isEmpty());
    QVERIFY(jobA != jobB);

    // Independent counts from the exports.
    const auto rowsA = exportedRows(jobA);
    const auto rowsB = exportedRows(jobB);
    QCOMPARE(rowsA.size(), size_t{12});
    QCOMPARE(rowsB.size(), size_t{12});
    const auto countsOf = [](const std::vector<nlohmann::json>& rows) {
      std::map<std::string, int64_t> reasons;
      std::vector<int> tokens;
      int64_t done = 0;
      for (const auto& row : rows) {
        ++reasons[row["finish_reason"].get<std::string>()];
        if (row["status"] != "done") continue;
        ++done;
        tokens.push_back(row["output_tokens"].get<int>());
      }
      std::sort(tokens.begin(), tokens.end());
      double mean = 0;
      for (const int t : tokens) mean += t;
      mean /= static_cast<double>(tokens.size());
      const double median = (tokens[5] + tokens[6]) / 2.0;  // twelve rows
      return std::make_tuple(done, mean, median, reasons);
    };
    const auto [doneA, meanA, medianA, reasonsA] = countsOf(rowsA);
    const auto [doneB, meanB, medianB, reasonsB] = countsOf(rowsB);
    int64_t numDiffering = 0;
    for (size_t i = 0; i < 12; ++i)
      numDiffering += rowsA[i]["output"] != rowsB[i]["output"] ? 1 : 0;

    // Select both jobs in the Jobs tab and press Compare….
    sluice::ui::JobsView* jobs = window.jobsView();
    QSignalSpy listed(jobs, &sluice::ui::JobsView::listed);
    jobs->refresh();
    QVERIFY(listed.wait(10000));
    QCOMPARE(jobs->model()->rowCount(), 2);
    const auto buttons = jobs->findChildren<QPushButton*>();
    QPushButton* compare = *std::find_if(buttons.begin(), buttons.end(),
                                         [](QPushButton* b) { return b->text() == "Compare…"; });
    jobs->table()->selectRow(0);
    QVERIFY(!compare->isEnabled());  // one job: nothing to compare with
    jobs->table()->selectionModel()->select(
        jobs->model()->index(1, 0), QItemSelectionModel::Select | QItemSelectionModel::Rows);
    QVERIFY(compare->isEnabled());
    QTest::mouseClick(compare, Qt::LeftButton);
    auto* dialog = jobs->findChild<JobCompareDialog*>();
    QVERIFY(dialog != nullptr);
    QAbstractItemModelTester tester(dialog->model(),
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
    QSignalSpy compared(dialog, &JobCompareDialog::compared);
    QVERIFY(compared.wait(30000));
    QVERIFY2(dialog->errorText().isEmpty(), qPrintable(dialog->errorText()));

    // The Jobs table sorts by name: find which side is the max_tokens 6 run.
    const bool isAFirst = jobs->selectedPaths().front() == jobA;
    const sluice::JobSideStats& sideA = isAFirst ? dialog->stats().a : dialog->stats().b;
    const sluice::JobSideStats& sideB = isAFirst ? dialog->stats().b : dialog->stats().a;
    QCOMPARE(sideA.num_rows, 12);
    QCOMPARE(sideA.num_done, doneA);
    QCOMPARE(sideB.num_done, doneB);
    QCOMPARE(sideA.num_failed, 12 - doneA);
    QCOMPARE(sideA.mean_output_length, meanA);
    QCOMPARE(sideB.mean_output_length, meanB);
    QCOMPARE(sideA.median_output_length, medianA);
    QCOMPARE(sideB.median_output_length, medianB);
    QCOMPARE(sideA.finish_reason_counts, reasonsA);
    QCOMPARE(sideB.finish_reason_counts, reasonsB);
    QCOMPARE(dialog->stats().num_differing_rows, numDiffering);
    QVERIFY(numDiffering > 0);
    // The table at the top shows them: the "Done" row holds both counts.
    QTableWidget* stats = dialog->statsTable();
    QCOMPARE(stats->verticalHeaderItem(1)->text(), QString("Done"));
    QCOMPARE(stats->item(1, isAFirst ? 0 : 1)->text(), QString::number(doneA));

    // Rows side by side, matched by row index.
    JobCompareModel* model = dialog->model();
    QCOMPARE(model->rowCount(), 12);
    QTRY_VERIFY_WITH_TIMEOUT(model->isLoaded(0), 10000);
    const int outA = isAFirst ? JobCompareModel::OutputAColumn : JobCompareModel::OutputBColumn;
    const int outB = isAFirst ? JobCompareModel::OutputBColumn : JobCompareModel::OutputAColumn;
    const int finishA = isAFirst ? JobCompareModel::FinishAColumn : JobCompareModel::FinishBColumn;
    for (int i = 0; i < 12; ++i) {
      QCOMPARE(model->data(model->index(i, JobCompareModel::RowColumn)).toString(),
               QString::number(i));
      QCOMPARE(
          model->data(model->index(i, JobCompareModel::PromptColumn), Qt::ToolTipRole).toString(),
          QString::fromStdString(rowsA[i]["prompt"].get<std::string>()));
      QCOMPARE(model->data(model->index(i, outA), Qt::ToolTipRole).toString(),
               QString::fromStdString(rowsA[i]["output"].get<std::string>()));
      QCOMPARE(model->data(model->index(i, outB), Qt::ToolTipRole).toString(),
               QString::fromStdString(rowsB[i]["output"].get<std::string>()));
      QCOMPARE(model->data(model->index(i, finishA)).toString(),
               QString("%1 · %2 tok")
                   .arg(QString::fromStdString(rowsA[i]["finish_reason"].get<std::string>()))
                   .arg(rowsA[i]["output_tokens"].get<int>()));
    }

    // Selecting a row shows both outputs in full under the table.
    QSignalSpy detail(dialog, &JobCompareDialog::detailShown);
    dialog->rowsTable()->selectRow(3);
    QVERIFY(detail.wait(10000));
    QCOMPARE(dialog->detailText(isAFirst ? 0 : 1)->toPlainText(),
             QString::fromStdString(rowsA[3]["output"].get<std::string>()));

    // Only the rows that differ.
    dialog->onlyDifferingBox()->setChecked(true);
    QCOMPARE(model->rowCount(), static_cast<int>(numDiffering));
    dialog->close();
  }

  void refusesJobsOverDifferentFilesNamingBoth() {
    QTemporaryDir dir;
    const QString a =
        writeJob(dir.filePath("a.sluicejob"), "/data/first.jsonl", std::string(64, 'a'), 3);
    const QString b =
        writeJob(dir.filePath("b.sluicejob"), "/data/second.jsonl", std::string(64, 'b'), 3);
    JobCompareDialog dialog(a, b);
    QSignalSpy compared(&dialog, &JobCompareDialog::compared);
    QVERIFY(compared.wait(10000));
    QVERIFY(dialog.errorText().contains("first.jsonl"));
    QVERIFY(dialog.errorText().contains("second.jsonl"));
    QVERIFY(dialog.errorText().contains("a.sluicejob"));
    QVERIFY(dialog.errorText().contains("b.sluicejob"));
    QCOMPARE(dialog.model()->rowCount(), 0);
    QVERIFY(!dialog.rowsTable()->isVisibleTo(&dialog));  // the message instead of empty rows
  }

  void modelReadsOnlyThePagesShown() {
    QTemporaryDir dir;
    const std::string sha(64, 'c');
    const QString a = writeJob(dir.filePath("a.sluicejob"), "/data/x.jsonl", sha, 1000);
    const QString b = writeJob(dir.filePath("b.sluicejob"), "/data/x.jsonl", sha, 990);
    JobCompareModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    std::vector<int64_t> rows(1000);
    for (int i = 0; i < 1000; ++i) rows[static_cast<size_t>(i)] = i;
    model.setRows(a, b, rows, {});
    QCOMPARE(model.rowCount(), 1000);
    QSignalSpy loaded(&model, &JobCompareModel::pageLoaded);
    QSignalSpy failed(&model, &JobCompareModel::loadFailed);
    const QModelIndex last = model.index(995, JobCompareModel::OutputAColumn);
    QCOMPARE(model.data(last).toString(), QString("…"));  // read on the pool, not here
    QCOMPARE(loaded.size(), 0);  // not even when the read was quick: data() never emits
    QTRY_VERIFY_WITH_TIMEOUT(model.isLoaded(995), 10000);
    QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.first().at(0).toString()));
    QCOMPARE(loaded.first().at(0).toInt(), 995 / JobCompareModel::kPageRows);
    QCOMPARE(model.data(last).toString(), QString("out 995"));
    QCOMPARE(model.data(model.index(995, JobCompareModel::FinishBColumn)).toString(),
             QString("(not run)"));
    QVERIFY(!model.isLoaded(0));
  }
};

QTEST_MAIN(JobCompareTest)
#include "job_compare_test.moc"
