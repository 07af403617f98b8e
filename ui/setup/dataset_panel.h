// Choosing an instruction file and shaping its prompts: the file (dialog or drag and drop), its
// detected format with an override, a preview of the first rows, the column template with field
// chips, a system prompt, whether the model's chat template is used, a thinking model's reasoning
// controls (ReasoningPanel), the exact prompt of the
// selected row, and a histogram of prompt token lengths over the file. Reading the file and
// tokenizing it run on the thread pool; results of superseded work are dropped by generation.
#pragma once

#include <QFuture>
#include <QFutureWatcher>
#include <QString>
#include <QVector>
#include <QWidget>
#include <vector>

#include "app/generation_spec.h"
#include "app/run_snapshots.h"
#include "engine/input/dataset_row.h"
#include "engine/input/field_discovery.h"

class QAbstractItemModel;
class QCheckBox;
class QComboBox;
class QGridLayout;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QStandardItemModel;
class QTableView;
class QTimer;

namespace sluice::ui {

class LengthHistogram;
class PromptPreview;
class ReasoningPanel;

// What reading the start of a file found (made on the thread pool).
struct DatasetScan {
  quint64 generation = 0;
  QString path;
  sluice::DatasetFormat format = sluice::DatasetFormat::Auto;  // concrete once read
  std::vector<sluice::FieldInfo> fields;
  std::vector<sluice::DatasetRow> rows;  // the first rows, for the preview
  int numBadRows = 0;                    // malformed rows met while collecting them
  QString error;                         // why the file cannot be read, or ""
};

// Prompt token lengths over (the start of) a file (made on the thread pool).
struct PromptLengthCount {
  quint64 generation = 0;
  QVector<int> lengths;
  int numFailedRows = 0;
  QString firstRowError;
  bool isTruncated = false;  // stopped at the row cap before the end of the file
  QString error;             // why nothing could be counted, or ""
};

class DatasetPanel final : public QWidget {
  Q_OBJECT

 public:
  explicit DatasetPanel(QWidget* parent = nullptr);
  ~DatasetPanel() override;

  QString datasetPath() const { return m_path; }
  // Returns the chosen format: the override, else the detected one, else Auto (not read yet).
  sluice::DatasetFormat format() const;
  // Returns the detected format, or Auto before the file is read.
  sluice::DatasetFormat detectedFormat() const { return m_scan.format; }
  sluice::PromptOptions promptOptions() const;
  sluice::BadRowPolicy onBadRow() const;
  QString columnTemplate() const;
  // Returns the template chosen for this file's fields ("" for chat formats).
  QString defaultColumnTemplate() const { return m_defaultTemplate; }
  const std::vector<sluice::FieldInfo>& fields() const { return m_scan.fields; }
  // Returns the previewed rows (the first ones of the file).
  const std::vector<sluice::DatasetRow>& previewRows() const { return m_scan.rows; }
  // Returns the problem reading the file, or "".
  QString errorText() const { return m_scan.error; }
  bool isCountingLengths() const { return m_lengthFuture.isRunning(); }

  QAbstractItemModel* previewModel() const;
  PromptPreview* promptPreview() const { return m_preview; }
  ReasoningPanel* reasoningPanel() const { return m_reasoning; }
  LengthHistogram* lengthHistogram() const { return m_histogram; }

  // Rows tokenized for the histogram at most; beyond this the shape no longer changes.
  static constexpr int kMaxCountedRows = 20000;

 public slots:
  // Opens path (preloading, or a choice made elsewhere) and reads it in the background.
  void setDatasetPath(const QString& path);
  // Asks for an instruction file with a file dialog (then as setDatasetPath).
  void openDialog();
  // Shows options (for example from a job being resumed); the chat template source is kept.
  void setPromptOptions(const sluice::PromptOptions& options);
  void setOnBadRow(sluice::BadRowPolicy policy);
  // The model whose tokenizer and chat template render and count the prompts.
  void setModel(const sluice::ModelSummary& summary);
  void clearModel();

 signals:
  void datasetChosen(const QString& path);
  // The file was read (ok) or could not be (see errorText()).
  void datasetLoaded(bool ok);
  void promptOptionsChanged();
  void promptLengthsReady(const QVector<int>& lengths);

 private:
  QWidget* buildFileRows();
  QWidget* buildPromptTab();
  void startScan();
  void onScanned();
  void fillPreviewTable();
  void fillFieldChips();
  void insertField(const QString& name);
  void onSelectedRowChanged();
  void onOptionsEdited();
  void updateTemplateEnabled();
  void updateChatTemplateCheck();
  void updateDetectedReasoningFormat();
  void scheduleCount();
  void startCount();
  void onCountProgress(int value);
  void onCounted();

  QString m_path;
  DatasetScan m_scan;
  QString m_defaultTemplate;
  QString m_chatTemplateSource;  // PromptOptions::chat_template, kept as given
  sluice::ModelSummary m_model;
  bool m_hasModel = false;
  bool m_applyingOptions = false;

  quint64 m_scanGeneration = 0;
  QFuture<DatasetScan> m_scanFuture;
  QFutureWatcher<DatasetScan> m_scanWatcher;
  quint64 m_countGeneration = 0;
  QFuture<PromptLengthCount> m_lengthFuture;
  QFutureWatcher<PromptLengthCount> m_lengthWatcher;
  QTimer* m_countTimer = nullptr;

  QLineEdit* m_pathEdit = nullptr;
  QComboBox* m_formatCombo = nullptr;
  QLabel* m_statusLabel = nullptr;
  QStandardItemModel* m_previewModel = nullptr;
  QTableView* m_table = nullptr;
  QPlainTextEdit* m_templateEdit = nullptr;
  QPushButton* m_defaultTemplateButton = nullptr;
  QWidget* m_chips = nullptr;
  QGridLayout* m_chipsLayout = nullptr;
  QPlainTextEdit* m_systemEdit = nullptr;
  QCheckBox* m_chatTemplateCheck = nullptr;
  ReasoningPanel* m_reasoning = nullptr;
  QComboBox* m_badRowCombo = nullptr;
  PromptPreview* m_preview = nullptr;
  LengthHistogram* m_histogram = nullptr;
};

}  // namespace sluice::ui
