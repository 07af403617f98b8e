#include "ui/main_window.h"

#include <qcustomplot.h>

#include <QApplication>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QStatusBar>
#include <QTableWidget>
#include <QVBoxLayout>

namespace sluice::ui {

namespace {

enum Column { kId, kPrompt, kOutput, kTokens, kFinish, kTime, kNumColumns };

QString elide(const QString& text, int max_chars = 160) {
  QString flat = text;
  flat.replace('\n', QChar(0x21B5));
  return flat.size() > max_chars ? flat.left(max_chars) + QChar(0x2026) : flat;
}

}  // namespace

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
  setWindowTitle("Sluice");
  auto* central = new QWidget(this);
  auto* layout = new QVBoxLayout(central);
  layout->addWidget(buildInputs());
  auto* splitter = new QSplitter(Qt::Vertical, central);
  m_plot = new QCustomPlot(splitter);
  m_plot->addGraph();
  m_plot->graph(0)->setName("generated tokens/s");
  m_plot->addGraph();
  m_plot->graph(1)->setName("prompt tokens/s");
  m_plot->graph(1)->setPen(QPen(Qt::darkGreen));
  m_plot->xAxis->setLabel("seconds");
  m_plot->yAxis->setLabel("tokens/s");
  m_plot->legend->setVisible(true);
  m_plot->setMinimumHeight(160);
  splitter->addWidget(m_plot);
  splitter->addWidget(buildResults());
  layout->addWidget(splitter, 1);
  setCentralWidget(central);
  m_statusLabel = new QLabel("Pick a model and an instruction file, then Start.", this);
  statusBar()->addWidget(m_statusLabel, 1);
  resize(1100, 760);

  m_worker = new EngineWorker;
  m_worker->moveToThread(&m_engineThread);
  connect(&m_engineThread, &QThread::finished, m_worker, &QObject::deleteLater);
  connect(this, &MainWindow::runRequested, m_worker, &EngineWorker::runJob, Qt::QueuedConnection);
  connect(m_worker, &EngineWorker::loadProgress, this, &MainWindow::onLoadProgress);
  connect(m_worker, &EngineWorker::jobStarted, this, &MainWindow::onJobStarted);
  connect(m_worker, &EngineWorker::rowsFinished, this, &MainWindow::onRowsFinished);
  connect(m_worker, &EngineWorker::statsUpdated, this, &MainWindow::onStats);
  connect(m_worker, &EngineWorker::jobFinished, this, &MainWindow::onJobFinished);
  connect(m_worker, &EngineWorker::jobFailed, this, &MainWindow::onJobFailed);
  m_engineThread.start();
}

MainWindow::~MainWindow() {
  m_worker->requestCancel();
  m_engineThread.quit();
  m_engineThread.wait();
}

QWidget* MainWindow::buildInputs() {
  auto* box = new QWidget(this);
  auto* form = new QFormLayout(box);
  auto pathRow = [&](QLineEdit*& edit, const QString& placeholder, void (MainWindow::*browse)()) {
    auto* row = new QHBoxLayout;
    edit = new QLineEdit(box);
    edit->setPlaceholderText(placeholder);
    auto* button = new QPushButton("Browse…", box);
    connect(button, &QPushButton::clicked, this, browse);
    row->addWidget(edit, 1);
    row->addWidget(button);
    return row;
  };
  form->addRow("Model", pathRow(m_modelEdit, "GGUF file, Hugging Face folder or llama2.c .bin",
                                &MainWindow::browseModel));
  form->addRow("Instructions",
               pathRow(m_datasetEdit, "JSONL with a \"prompt\" per row, or Alpaca JSON",
                       &MainWindow::browseDataset));
  auto* params = new QHBoxLayout;
  m_maxTokens = new QSpinBox(box);
  m_maxTokens->setRange(1, 1 << 20);
  m_maxTokens->setValue(128);
  m_temperature = new QDoubleSpinBox(box);
  m_temperature->setRange(0.0, 5.0);
  m_temperature->setSingleStep(0.1);
  m_startButton = new QPushButton("Start", box);
  m_startButton->setShortcut(QKeySequence("Ctrl+Return"));
  m_cancelButton = new QPushButton("Cancel", box);
  m_cancelButton->setEnabled(false);
  m_progress = new QProgressBar(box);
  params->addWidget(new QLabel("Max tokens", box));
  params->addWidget(m_maxTokens);
  params->addWidget(new QLabel("Temperature", box));
  params->addWidget(m_temperature);
  params->addWidget(m_startButton);
  params->addWidget(m_cancelButton);
  params->addWidget(m_progress, 1);
  form->addRow(params);
  connect(m_startButton, &QPushButton::clicked, this, &MainWindow::start);
  connect(m_cancelButton, &QPushButton::clicked, this, &MainWindow::cancel);
  return box;
}

QWidget* MainWindow::buildResults() {
  m_table = new QTableWidget(0, kNumColumns, this);
  m_table->setHorizontalHeaderLabels({"id", "prompt", "output", "tokens", "finish", "ms"});
  m_table->horizontalHeader()->setSectionResizeMode(kOutput, QHeaderView::Stretch);
  m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
  m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
  m_table->setSortingEnabled(true);
  return m_table;
}

void MainWindow::preload(const QString& modelPath, const QString& datasetPath) {
  m_modelEdit->setText(modelPath);
  m_datasetEdit->setText(datasetPath);
}

void MainWindow::browseModel() {
  const QString path = QFileDialog::getOpenFileName(this, "Open model", QString(),
                                                    "Models (*.gguf *.bin *.json);;All files (*)");
  if (!path.isEmpty())
    m_modelEdit->setText(path.endsWith("config.json") ? QFileInfo(path).absolutePath() : path);
}

void MainWindow::browseDataset() {
  const QString path = QFileDialog::getOpenFileName(
      this, "Open instructions", QString(), "Instruction files (*.jsonl *.json);;All files (*)");
  if (!path.isEmpty()) m_datasetEdit->setText(path);
}

void MainWindow::start() {
  if (m_modelEdit->text().isEmpty() || m_datasetEdit->text().isEmpty()) {
    QMessageBox::information(this, "Sluice", "Pick a model and an instruction file first.");
    return;
  }
  GenerationSpec spec;
  spec.model_path = m_modelEdit->text().toStdString();
  spec.input_path = m_datasetEdit->text().toStdString();
  spec.sampling.max_tokens = m_maxTokens->value();
  spec.sampling.temperature = static_cast<float>(m_temperature->value());
  m_table->setRowCount(0);
  for (int g = 0; g < m_plot->graphCount(); ++g) m_plot->graph(g)->data()->clear();
  m_plot->replot();
  setRunning(true);
  m_statusLabel->setText("Loading the model…");
  emit runRequested(++m_generation, spec);
}

void MainWindow::cancel() {
  m_worker->requestCancel();
  m_statusLabel->setText("Cancelling…");
}

void MainWindow::setRunning(bool running) {
  m_startButton->setEnabled(!running);
  m_cancelButton->setEnabled(running);
  m_modelEdit->setEnabled(!running);
  m_datasetEdit->setEnabled(!running);
}

void MainWindow::onLoadProgress(quint64 generation, double fraction, const QString& stage) {
  if (generation != m_generation) return;
  m_progress->setRange(0, 1000);
  m_progress->setValue(static_cast<int>(fraction * 1000));
  m_statusLabel->setText("Loading: " + stage);
}

void MainWindow::onJobStarted(quint64 generation, const QString& jobPath, const QString& modelDescription) {
  if (generation != m_generation) return;
  m_rowsDone = 0;
  m_progress->setRange(0, 1000);  // by how much of the file has been read
  m_progress->setValue(0);
  m_statusLabel->setText(modelDescription + " · job " + jobPath);
}

void MainWindow::onRowsFinished(quint64 generation, const QVector<sluice::RowSnapshot>& rows) {
  if (generation != m_generation) return;
  m_table->setSortingEnabled(false);
  for (const RowSnapshot& row : rows) {
    const int r = m_table->rowCount();
    m_table->insertRow(r);
    m_table->setItem(r, kId, new QTableWidgetItem(row.id));
    m_table->setItem(r, kPrompt, new QTableWidgetItem(elide(row.prompt, 60)));
    auto* output = new QTableWidgetItem(elide(row.error.isEmpty() ? row.output : row.error));
    output->setToolTip(row.error.isEmpty() ? row.output : row.error);
    m_table->setItem(r, kOutput, output);
    auto* tokens = new QTableWidgetItem;
    tokens->setData(Qt::DisplayRole, row.outputTokens);
    m_table->setItem(r, kTokens, tokens);
    m_table->setItem(r, kFinish, new QTableWidgetItem(row.finishReason));
    auto* time = new QTableWidgetItem;
    time->setData(Qt::DisplayRole, qRound(row.totalMs));
    m_table->setItem(r, kTime, time);
  }
  m_table->setSortingEnabled(true);
}

void MainWindow::onStats(quint64 generation, const sluice::StepStats& stats, const sluice::JobProgress& progress) {
  if (generation != m_generation) return;
  m_rowsDone = progress.rows_done;
  m_progress->setValue(static_cast<int>(1000 * progress.file_fraction));
  m_plot->graph(0)->addData(stats.elapsed_s, stats.generation_tokens_per_s);
  m_plot->graph(1)->addData(stats.elapsed_s, stats.prompt_tokens_per_s);
  m_plot->rescaleAxes();
  m_plot->replot(QCustomPlot::rpQueuedReplot);
  const double kv =
      stats.num_kv_blocks > 0 ? 100.0 * stats.num_kv_blocks_used / stats.num_kv_blocks : 0.0;
  m_statusLabel->setText(QString("rows %1 (file %2%) · %3 tok/s · running %4, waiting %5 · KV %6%")
                             .arg(progress.rows_done)
                             .arg(qRound(100 * progress.file_fraction))
                             .arg(stats.generation_tokens_per_s, 0, 'f', 0)
                             .arg(stats.num_running)
                             .arg(stats.num_waiting)
                             .arg(kv, 0, 'f', 0));
}

void MainWindow::onJobFinished(quint64 generation, int rowsFailed, bool cancelled) {
  if (generation != m_generation) return;
  setRunning(false);
  m_statusLabel->setText(cancelled
                             ? "Cancelled."
                             : QString("Done: %1 rows, %2 failed or skipped.").arg(m_rowsDone).arg(rowsFailed));
  if (m_quitWhenDone) QApplication::exit(rowsFailed > 0 ? 3 : 0);
}

void MainWindow::onJobFailed(quint64 generation, const QString& message) {
  if (generation != m_generation) return;
  setRunning(false);
  m_statusLabel->setText("Failed: " + message);
  if (m_quitWhenDone) {
    QApplication::exit(1);
    return;
  }
  QMessageBox::warning(this, "Sluice", message);
}

}  // namespace sluice::ui
