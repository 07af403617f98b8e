// The export dialog's "Schema fields as columns" box: ticked by default for a job with a JSON
// Schema grammar, not for others, enabled only for CSV, and passed on to ExportOptions (and so
// to the written file, whose header is checked against names written out here). The job is read on
// the pool: a locked job file does not hold up the window.
#include <QCheckBox>
#include <QComboBox>
#include <QElapsedTimer>
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>
#include <string>

#include "engine/jobs/job_store.h"
#include "tests/gui/locked_job_file.h"
#include "ui/results/export_dialog.h"

using sluice::ExportFormat;
using sluice::JobInfo;
using sluice::JobStore;
using sluice::RowResult;
using sluice::RowStatus;
using sluice::SampleResult;
using sluice::ui::ExportDialog;

namespace {

// Creates a job at path with one done row whose output is {"mood":"sad","n":3}; with a JSON
// Schema grammar in its parameters when withSchema.
void makeJob(const QString& path, bool withSchema) {
  JobInfo info;
  info.source_path = "/no/such/folder/in.jsonl";
  info.source_format = "jsonl";
  info.model_path = "/models/m.gguf";
  info.params["n"] = 1;
  if (withSchema) {
    info.params["grammar"] = {
        {"kind", "json_schema"},
        {"name", "schema.json"},
        {"text", R"({"type":"object","properties":{"n":{"type":"integer"},"mood":{}}})"}};
  }
  RowResult row;
  row.row_index = 0;
  row.line = 1;
  row.status = RowStatus::Done;
  row.input = {{"q", "x"}};
  row.prompt = std::string(1, 'p');
  SampleResult sample;
  sample.output = R"({"mood":"sad","n":3})";
  sample.output_tokens = 5;
  sample.finish_reason = "stop";
  row.samples = {sample};
  const auto store = JobStore::create(path.toStdString(), info);
  store->add_result(row);
  store->flush();
}

QCheckBox* flattenBox(ExportDialog& dialog) {
  return dialog.findChild<QCheckBox*>(QStringLiteral("flattenOutput"));
}

}  // namespace

class ExportDialogTest : public QObject {
  Q_OBJECT

 private slots:
  void schemaJobTicksSchemaFieldsAsColumns();
  void jobWithoutSchemaLeavesItUnticked();
  void onlyCsvCanFlatten();
  void reasoningModeComesFromTheCombo();
  void aLockedJobDoesNotBlockTheGuiThread();

 private:
  QTemporaryDir m_dir;
};

void ExportDialogTest::schemaJobTicksSchemaFieldsAsColumns() {
  const QString jobPath = m_dir.filePath("schema.sluicejob");
  makeJob(jobPath, true);
  ExportDialog dialog(jobPath);
  QCheckBox* box = flattenBox(dialog);
  QVERIFY(box);
  QTRY_VERIFY(dialog.hasReadJob());
  QVERIFY(box->isChecked());
  const QString output = m_dir.filePath("schema.csv");
  sluice::ExportOptions options;
  options.flatten_output = true;
  dialog.setChoices(output, ExportFormat::Csv, options);
  QVERIFY(box->isEnabled());
  QVERIFY(dialog.options().flatten_output);
  QSignalSpy finished(&dialog, &ExportDialog::exportFinished);
  dialog.startExport();
  QVERIFY(finished.wait(60000));
  QVERIFY2(finished.first().at(0).toBool(), qPrintable(dialog.resultText()));
  QFile file(output);
  QVERIFY(file.open(QIODevice::ReadOnly));
  QCOMPARE(file.readLine(),
           QByteArray("row_index,status,q,prompt,output,output.n,output.mood,output_tokens,"
                      "finish_reason,total_ms\r\n"));
}

void ExportDialogTest::jobWithoutSchemaLeavesItUnticked() {
  const QString jobPath = m_dir.filePath("free.sluicejob");
  makeJob(jobPath, false);
  ExportDialog dialog(jobPath);
  QCheckBox* box = flattenBox(dialog);
  QVERIFY(box);
  QTRY_VERIFY(dialog.hasReadJob());
  QVERIFY(!box->isChecked());
  dialog.setChoices(m_dir.filePath("free.csv"), ExportFormat::Csv, {});
  QVERIFY(!dialog.options().flatten_output);
}

void ExportDialogTest::onlyCsvCanFlatten() {
  const QString jobPath = m_dir.filePath("formats.sluicejob");
  makeJob(jobPath, true);
  ExportDialog dialog(jobPath);
  QCheckBox* box = flattenBox(dialog);
  QVERIFY(box);
  sluice::ExportOptions options;
  options.flatten_output = true;
  dialog.setChoices(m_dir.filePath("formats.jsonl"), ExportFormat::Jsonl, options);
  QVERIFY(!box->isEnabled());
  QVERIFY(!dialog.options().flatten_output);
  dialog.setChoices(m_dir.filePath("formats.csv"), ExportFormat::Csv, options);
  QVERIFY(box->isEnabled());
  QVERIFY(dialog.options().flatten_output);
}

// Opening the dialog on a job another connection holds locked returns at once; the job's facts
// (its failed rows, its schema) fill in once the lock is gone, and leave alone what was chosen.
void ExportDialogTest::reasoningModeComesFromTheCombo() {
  const QString jobPath = m_dir.filePath("reasoning.sluicejob");
  makeJob(jobPath, false);
  ExportDialog dialog(jobPath);
  auto* combo = dialog.findChild<QComboBox*>(QStringLiteral("reasoningExport"));
  QVERIFY(combo);
  QCOMPARE(dialog.options().reasoning, sluice::ReasoningExport::Separate);  // the default
  combo->setCurrentIndex(combo->findData(static_cast<int>(sluice::ReasoningExport::Strip)));
  QCOMPARE(dialog.options().reasoning, sluice::ReasoningExport::Strip);
  sluice::ExportOptions options;
  options.reasoning = sluice::ReasoningExport::Keep;
  dialog.setChoices(m_dir.filePath("keep.jsonl"), ExportFormat::Jsonl, options);
  QCOMPARE(combo->currentData().toInt(), static_cast<int>(sluice::ReasoningExport::Keep));
  QCOMPARE(dialog.options().reasoning, sluice::ReasoningExport::Keep);
}

void ExportDialogTest::aLockedJobDoesNotBlockTheGuiThread() {
  const QString jobPath = m_dir.filePath("locked.sluicejob");
  makeJob(jobPath, true);
  sluice::test::LockedJobFile lock(jobPath.toStdString());
  QElapsedTimer timer;
  timer.start();
  ExportDialog dialog(jobPath);
  QVERIFY2(
      timer.elapsed() < sluice::test::kMaxGuiCallMs,
      qPrintable(QString("the GUI thread waited %1 ms for the locked file").arg(timer.elapsed())));
  QVERIFY(!dialog.hasReadJob());
  const QString output = m_dir.filePath("chosen.jsonl");
  dialog.setChoices(output, ExportFormat::Jsonl, {});
  lock.release();
  QTRY_VERIFY_WITH_TIMEOUT(dialog.hasReadJob(), 10000);
  QVERIFY2(dialog.failedRowsText().contains("0 failed and 0 skipped"),
           qPrintable(dialog.failedRowsText()));
  QCOMPARE(dialog.outputPath(), output);  // the choice made while it was read stays
}

QTEST_MAIN(ExportDialogTest)
#include "export_dialog_test.moc"
