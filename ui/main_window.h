// The main window: pick a model and an instruction file, start, watch throughput, and read the
// rows as they finish. The engine runs in EngineWorker's thread; this window only shows values.
#pragma once

#include <QMainWindow>
#include <QThread>
#include <QVector>

#include "app/engine_worker.h"

class QCustomPlot;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTableWidget;

namespace sluice::ui {

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  void preload(const QString& modelPath, const QString& datasetPath);
  void setQuitWhenDone(bool quit) { m_quitWhenDone = quit; }

 public slots:
  void start();
  void cancel();

 signals:
  void runRequested(quint64 generation, const sluice::GenerationSpec& spec);

 private:
  QWidget* buildInputs();
  QWidget* buildResults();
  void browseModel();
  void browseDataset();
  void setRunning(bool running);
  void onLoadProgress(quint64 generation, double fraction, const QString& stage);
  void onJobStarted(quint64 generation, const QString& jobPath, const QString& modelDescription);
  void onRowsFinished(quint64 generation, const QVector<sluice::RowSnapshot>& rows);
  void onStats(quint64 generation, const sluice::StepStats& stats, const sluice::JobProgress& progress);
  void onJobFinished(quint64 generation, int rowsFailed, bool cancelled);
  void onJobFailed(quint64 generation, const QString& message);

  QThread m_engineThread;
  EngineWorker* m_worker = nullptr;
  quint64 m_generation = 0;
  bool m_quitWhenDone = false;
  int64_t m_rowsDone = 0;

  QLineEdit* m_modelEdit = nullptr;
  QLineEdit* m_datasetEdit = nullptr;
  QSpinBox* m_maxTokens = nullptr;
  QDoubleSpinBox* m_temperature = nullptr;
  QPushButton* m_startButton = nullptr;
  QPushButton* m_cancelButton = nullptr;
  QProgressBar* m_progress = nullptr;
  QLabel* m_statusLabel = nullptr;
  QCustomPlot* m_plot = nullptr;
  QTableWidget* m_table = nullptr;
};

}  // namespace sluice::ui
