// Export a job to a training format: pick the format (engine/export/exporters.h), the DPO rule and
// score field and whether only the rows reviewed in the Pairs tab go in (the result then says how
// many pairs came from picks, how many from the rule and how many of those were ties), for CSV
// whether JSON outputs' fields get their own columns (ticked by default for a job with a JSON
// Schema grammar), whether failed rows go in (the dialog says in words whether they do, and how
// many the job has), whether invalid rows stay out (only for a job with a grammar or schemas,
// saying how many it has), and the output file (by default beside the job's instruction file). The
// export runs in a pool thread with its own job connection, so a large job (or one still being
// written) never freezes the window; the dialog shows a busy bar and then says in plain words what
// was written or what went wrong. What the defaults need from the job is read on the pool too: they
// fill in when it arrives, unless the person (or setChoices) already chose. It cannot be closed
// while the export runs (export_job cannot be interrupted, and the output only appears, complete,
// when it ends).
#pragma once

#include <QDialog>
#include <QFutureWatcher>
#include <QString>

#include "engine/export/exporters.h"

class QCheckBox;
class QComboBox;
class QDialogButtonBox;
class QFormLayout;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;

namespace sluice::ui {

class ExportDialog final : public QDialog {
  Q_OBJECT

 public:
  // What one export ended with.
  struct Outcome {
    bool isSuccess = false;
    QString message;  // "Wrote 19,000 records to …" or "Export failed: <why>"
    qint64 numRecords = 0;
  };

  // What the defaults need from the job, read on the pool.
  struct JobFacts {
    QString sourcePath;  // the job's instruction file
    bool hasJsonSchema = false;
    bool hasGrammar = false;  // a grammar or a schema per row: its rows have verdicts
    qint64 numInvalid = -1;   // -1: the job could not be read
    qint64 numFailed = -1;    // -1: the job could not be read
    qint64 numSkipped = -1;
  };

  explicit ExportDialog(const QString& jobPath, QWidget* parent = nullptr);
  // Waits for a running export (only when the window is torn down under it).
  ~ExportDialog() override;

  // Sets every choice as a person would in the dialog; startExport() then uses them.
  void setChoices(const QString& outputPath, sluice::ExportFormat format,
                  const sluice::ExportOptions& options);
  QString outputPath() const;
  sluice::ExportFormat format() const;
  sluice::ExportOptions options() const;

  bool isRunning() const { return m_watcher.isRunning(); }
  // True once the job's facts (failed rows, schema, instruction file) have been read.
  bool hasReadJob() const { return m_hasReadJob; }
  // The last export's result as shown ("" before the first).
  QString resultText() const;
  // What the dialog says about failed and skipped rows for the current choices: left out or
  // included, and how many the job has.
  QString failedRowsText() const;

 public slots:
  // Starts exporting with the current choices (the Export button). Does nothing while running.
  void startExport();
  // Refuses to close while an export runs.
  void done(int result) override;

 signals:
  void exportFinished(bool isSuccess, const QString& message);
  // The job's facts arrived and the defaults were filled in.
  void jobRead();

 private:
  // Fills in the defaults from the job's facts where nothing was chosen yet.
  void applyJobFacts(const JobFacts& facts);
  QFormLayout* buildForm();
  void updateFailedRowsNote();
  void browse();
  void updateEnabled();
  // Gives the output path the new format's usual extension when it has a known one.
  void matchExtensionToFormat();
  void showOutcome(const Outcome& outcome);

  QString m_jobPath;
  JobFacts m_facts;
  bool m_hasReadJob = false;
  bool m_isOutputChosen = false;   // the output path was typed, browsed or set
  bool m_isFlattenChosen = false;  // "Schema fields as columns" was clicked or set
  QFutureWatcher<Outcome> m_watcher;
  QFutureWatcher<JobFacts> m_factsWatcher;

  QComboBox* m_format = nullptr;
  QComboBox* m_dpoRule = nullptr;
  QComboBox* m_reasoning = nullptr;  // ExportOptions::reasoning
  QLineEdit* m_scoreField = nullptr;
  QCheckBox* m_flattenOutput = nullptr;
  QCheckBox* m_includeFailed = nullptr;
  QCheckBox* m_leaveOutInvalid = nullptr;  // ExportOptions::leave_out_invalid
  QCheckBox* m_reviewedOnly = nullptr;     // ExportOptions::reviewed_only (DPO)
  QLabel* m_failedRowsNote = nullptr;
  QLineEdit* m_output = nullptr;
  QPushButton* m_browse = nullptr;
  QProgressBar* m_busy = nullptr;
  QLabel* m_result = nullptr;
  QDialogButtonBox* m_buttons = nullptr;
  QPushButton* m_exportButton = nullptr;
};

}  // namespace sluice::ui
