// The export dialog over the results tests' job file of 20k rows (results_job_rows.h): what it
// writes, its errors, its default folder and what it says of failed rows. Every expectation is
// computed from the rows the test wrote.
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLocale>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include "tests/gui/results_job_rows.h"
#include "ui/results/export_dialog.h"

using sluice::JobInfo;
using sluice::JobStore;
using sluice::RowStatus;
using sluice::ui::ExportDialog;
using namespace sluice::gui_test;

class ResultsExportTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase();
  void exportWritesJsonl();
  void exportReportsAnError();
  void exportDefaultsToTheInstructionFileFolder();
  void exportSaysWhetherFailedRowsAreIncluded();

 private:
  QTemporaryDir m_dir;
  QString m_jobPath;
};

void ResultsExportTest::initTestCase() {
  QStandardPaths::setTestModeEnabled(true);
  QVERIFY(m_dir.isValid());
  m_jobPath = m_dir.filePath("results.sluicejob");
  writeJob(m_jobPath, range(0, kNumRows));
}

void ResultsExportTest::exportWritesJsonl() {
  ExportDialog dialog(m_jobPath);
  const QString output = m_dir.filePath("export.jsonl");
  sluice::ExportOptions options;
  options.include_failed = false;
  dialog.setChoices(output, sluice::ExportFormat::Jsonl, options);
  QSignalSpy finished(&dialog, &ExportDialog::exportFinished);
  QElapsedTimer timer;
  timer.start();
  dialog.startExport();
  QVERIFY(finished.wait(60000));
  qInfo("exported in %lld ms: %s", timer.elapsed(), qPrintable(dialog.resultText()));
  QCOMPARE(finished.first().at(0).toBool(), true);
  QVERIFY2(dialog.resultText().startsWith("Wrote"), qPrintable(dialog.resultText()));

  QFile file(output);
  QVERIFY(file.open(QIODevice::ReadOnly));
  int numLines = 0;
  while (!file.atEnd()) {
    const QByteArray line = file.readLine().trimmed();
    if (line.isEmpty()) continue;
    QJsonParseError error;
    const QJsonDocument document = QJsonDocument::fromJson(line, &error);
    QVERIFY2(error.error == QJsonParseError::NoError, qPrintable(error.errorString()));
    QVERIFY(document.isObject());
    QCOMPARE(document.object().value("status").toString(), QString("done"));
    ++numLines;
  }
  QCOMPARE(numLines, countRows([](int64_t i) { return statusOf(i) == RowStatus::Done; }));
}

void ResultsExportTest::exportReportsAnError() {
  ExportDialog dialog(m_jobPath);
  dialog.setChoices(m_dir.filePath("no/such/dir/out.csv"), sluice::ExportFormat::Csv, {});
  QSignalSpy finished(&dialog, &ExportDialog::exportFinished);
  dialog.startExport();
  QVERIFY(finished.wait(60000));
  QCOMPARE(finished.first().at(0).toBool(), false);
  QVERIFY2(dialog.resultText().startsWith("Export failed:"), qPrintable(dialog.resultText()));
  QVERIFY2(dialog.resultText().contains("no/such/dir"), qPrintable(dialog.resultText()));
}

void ResultsExportTest::exportDefaultsToTheInstructionFileFolder() {
  // A job kept in a hidden jobs folder whose instruction file is in a data folder.
  const QString dataDir = m_dir.filePath("data");
  const QString jobsDir = m_dir.filePath(".jobs");
  QVERIFY(QDir().mkpath(dataDir) && QDir().mkpath(jobsDir));
  JobInfo info = makeInfo();
  info.source_path = QDir(dataDir).filePath("questions.jsonl").toStdString();
  const QString jobPath = QDir(jobsDir).filePath("questions-model.sluicejob");
  JobStore::create(jobPath.toStdString(), info)->add_result(makeRow(0));
  {
    ExportDialog dialog(jobPath);
    QTRY_VERIFY(dialog.hasReadJob());  // the instruction file's folder is read on the pool
    QCOMPARE(dialog.outputPath(), QDir(dataDir).filePath("questions-model.jsonl"));
  }
  // The instruction file's folder is gone (the job came from another machine): the job's folder.
  info.source_path = "/no/such/folder/questions.jsonl";
  const QString movedJob = QDir(jobsDir).filePath("moved.sluicejob");
  JobStore::create(movedJob.toStdString(), info)->add_result(makeRow(0));
  ExportDialog dialog(movedJob);
  QTRY_VERIFY(dialog.hasReadJob());
  QCOMPARE(dialog.outputPath(), QDir(jobsDir).filePath("moved.jsonl"));
}

void ResultsExportTest::exportSaysWhetherFailedRowsAreIncluded() {
  ExportDialog dialog(m_jobPath);
  QTRY_VERIFY(dialog.hasReadJob());  // the counts are read on the pool
  const QLocale locale;
  const QString counts =
      QString("%1 failed and %2 skipped rows")
          .arg(locale.toString(
                   countRows([](int64_t i) { return statusOf(i) == RowStatus::Failed; })),
               locale.toString(
                   countRows([](int64_t i) { return statusOf(i) == RowStatus::Skipped; })));
  sluice::ExportOptions options;
  dialog.setChoices(m_dir.filePath("out.csv"), sluice::ExportFormat::Csv, options);
  QVERIFY2(dialog.failedRowsText().contains("are left out"), qPrintable(dialog.failedRowsText()));
  QVERIFY2(dialog.failedRowsText().contains(counts), qPrintable(dialog.failedRowsText()));
  options.include_failed = true;  // the choice, as ticking the box makes it
  dialog.setChoices(m_dir.filePath("out.csv"), sluice::ExportFormat::Csv, options);
  QVERIFY2(dialog.failedRowsText().contains("are included"), qPrintable(dialog.failedRowsText()));
  QVERIFY(dialog.options().include_failed);
  dialog.setChoices(m_dir.filePath("out.json"), sluice::ExportFormat::Alpaca, options);
  QVERIFY2(dialog.failedRowsText().contains("needs an output"),
           qPrintable(dialog.failedRowsText()));
}

QTEST_MAIN(ResultsExportTest)
#include "results_export_test.moc"
