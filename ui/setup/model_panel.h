// Choosing and loading a model: a file or Hugging Face folder (dialog or drag and drop), an
// optional separate tokenizer, load progress with Cancel, then what was loaded (architecture,
// size, dtypes, context, tokenizer, chat template) and the memory plan. The panel only shows
// and asks; the owner loads the model off the GUI thread and calls the slots.
#pragma once

#include <QString>
#include <QWidget>

#include "app/run_snapshots.h"

class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QToolButton;

namespace sluice::ui {

class MemoryPlanView;

class ModelPanel final : public QWidget {
  Q_OBJECT

 public:
  explicit ModelPanel(QWidget* parent = nullptr);

  QString modelPath() const;
  // Returns the tokenizer chosen apart from the model, or "" for the model's own.
  QString tokenizerPath() const;
  MemoryPlanView* memoryPlanView() const { return m_planView; }
  bool isLoading() const { return m_loading; }
  // Returns the message of the last failed load, or "" (cleared by a new choice or load).
  QString errorText() const;
  // Returns the loaded model's facts as shown ("260K", "F32", ...), for tests and tooltips.
  QString parameterText() const;

  // Returns a parameter count as people write it: "260K", "15M", "7.2B".
  static QString formatParameterCount(qint64 count);

 public slots:
  // Shows path without asking for a load (preloading a path the owner will load itself).
  void setModelPath(const QString& path);
  // Shows path and asks for it to be loaded, as if the user had chosen it.
  void openModel(const QString& path);
  // Asks for a model file with a file dialog (then as openModel).
  void openDialog();
  void setLoading(double fraction, const QString& stage);
  void setLoaded(const sluice::ModelSummary& summary);
  void setLoadFailed(const QString& message);
  // A load failed while `kept` stays loaded and in use: shows it again, with the error.
  void setLoadFailedKeeping(const QString& message, const sluice::ModelSummary& kept);
  // The load stopped at the user's request: back to choosing, without an error.
  void setLoadCancelled();
  void setMemoryPlan(const sluice::MemoryPlan& plan);
  // Shows where the next run goes ("cpu", "auto", "cuda:N"), with what becomes of quantized
  // weights there, until a run reports its backend.
  void setDevice(const QString& device);
  // Shows the running backend as the engine describes it (device, activation type, weight
  // conversions such as "F32 weights converted to bf16; Q8_0 weights kept in their blocks").
  void setBackendDescription(const QString& description);
  // Shows where a remote job runs instead ("Remote: stories on 2 endpoints", no local model
  // needed) above the model's rows; "" hides it.
  void setRemote(const QString& text);
  // Returns the remote line as shown ("" when hidden), for tests.
  QString remoteText() const;
  // Returns the "Runs on" line as shown, for tests.
  QString runsOnText() const;

 signals:
  void modelPathChosen(const QString& path, const QString& tokenizerPath);
  void cancelLoadRequested();

 private:
  QWidget* buildPathRows();
  QWidget* buildProgressRow();
  QWidget* buildFacts();
  void browseModelFolder();
  void browseTokenizer();
  void showChatTemplate();
  void endLoading();
  void showFacts(bool visible);

  bool m_loading = false;
  QString m_chatTemplate;
  QLineEdit* m_pathEdit = nullptr;
  QLineEdit* m_tokenizerEdit = nullptr;
  QPushButton* m_openButton = nullptr;
  QToolButton* m_folderButton = nullptr;
  QWidget* m_progressRow = nullptr;
  QProgressBar* m_progress = nullptr;
  QPushButton* m_cancelButton = nullptr;
  QLabel* m_stageLabel = nullptr;
  QLabel* m_errorLabel = nullptr;
  QWidget* m_facts = nullptr;
  QLabel* m_architecture = nullptr;
  QLabel* m_parameters = nullptr;
  QLabel* m_dtypes = nullptr;
  QLabel* m_context = nullptr;
  QLabel* m_tokenizer = nullptr;
  QLabel* m_chatTemplateLabel = nullptr;
  QLabel* m_runsOn = nullptr;
  QLabel* m_remoteLabel = nullptr;
  QString m_weightDtypes;  // the loaded model's, e.g. "Q8_0+F32"
  QString m_device = "cpu";
  QToolButton* m_viewTemplateButton = nullptr;
  MemoryPlanView* m_planView = nullptr;
};

}  // namespace sluice::ui
