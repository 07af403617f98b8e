#include "ui/pipeline/pipeline_view.h"

#include <QDesktopServices>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QThread>
#include <QTreeWidget>
#include <QUrl>
#include <QVBoxLayout>

#include "app/pipeline/pipeline_worker.h"
#include "ui/common/number_format.h"

namespace sluice::ui {

PipelineView::PipelineView(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  auto* top = new QHBoxLayout;
  m_open = new QPushButton(tr("Open description…"), this);
  m_file = new QLabel(tr("No pipeline description: a JSON file of steps (generate, judge, "
                         "filter, dedup, export)."),
                      this);
  m_file->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_run = new QPushButton(tr("Run"), this);
  m_stop = new QPushButton(tr("Stop"), this);
  top->addWidget(m_open);
  top->addWidget(m_file, 1);
  top->addWidget(m_run);
  top->addWidget(m_stop);
  layout->addLayout(top);

  m_steps = new QTreeWidget(this);
  m_steps->setColumnCount(NumColumns);
  m_steps->setHeaderLabels({tr("Step"), tr("State"), tr("Progress"), tr("Rows in → out"),
                            tr("Model calls"), tr("Tokens"), tr("Time"), tr("Note")});
  m_steps->setRootIsDecorated(false);
  m_steps->setUniformRowHeights(true);
  m_steps->header()->setStretchLastSection(true);
  // Every column in sight at 1280 pixels: the note takes what the figures leave.
  m_steps->setColumnWidth(Step, 80);
  m_steps->setColumnWidth(State, 130);
  m_steps->setColumnWidth(Progress, 140);
  m_steps->setColumnWidth(Rows, 100);
  m_steps->setColumnWidth(Calls, 85);
  m_steps->setColumnWidth(Tokens, 70);
  m_steps->setColumnWidth(Time, 55);
  layout->addWidget(m_steps, 1);

  auto* bottom = new QHBoxLayout;
  m_status = new QLabel(this);
  m_status->setWordWrap(true);
  m_review = new QPushButton(tr("Review pairs"), this);
  m_report = new QPushButton(tr("Open report"), this);
  bottom->addWidget(m_status, 1);
  bottom->addWidget(m_review);
  bottom->addWidget(m_report);
  layout->addLayout(bottom);

  connect(m_open, &QPushButton::clicked, this, &PipelineView::chooseDescription);
  connect(m_run, &QPushButton::clicked, this, &PipelineView::start);
  connect(m_stop, &QPushButton::clicked, this, [this] {
    if (m_worker) m_worker->cancel();
    m_status->setText(tr("Stopping at the next commit…"));
  });
  connect(m_review, &QPushButton::clicked, this,
          [this] { emit reviewPairsRequested(m_generateJob); });
  connect(m_report, &QPushButton::clicked, this,
          [this] { QDesktopServices::openUrl(QUrl::fromLocalFile(m_reportPath)); });

  m_thread = new QThread(this);
  m_thread->setObjectName("pipeline");
  m_worker = new PipelineWorker;
  m_worker->moveToThread(m_thread);
  connect(m_thread, &QThread::finished, m_worker, &QObject::deleteLater);
  connect(m_worker, &PipelineWorker::loaded, this, &PipelineView::onLoaded);
  connect(m_worker, &PipelineWorker::stepStarted, this, &PipelineView::onStepStarted);
  connect(m_worker, &PipelineWorker::stepProgress, this, &PipelineView::onStepProgress);
  connect(m_worker, &PipelineWorker::stepDone, this, &PipelineView::onStepDone);
  connect(m_worker, &PipelineWorker::note, this,
          [this](const QString& text) { m_status->setText(text); });
  connect(m_worker, &PipelineWorker::finished, this, &PipelineView::onFinished);
  connect(m_worker, &PipelineWorker::cancelled, this,
          [this] { onEnded(tr("Stopped. What the steps finished is kept: Run resumes.")); });
  connect(m_worker, &PipelineWorker::failed, this,
          [this](const QString& error) { onEnded(tr("Failed: %1").arg(error)); });
  m_thread->start();
  updateButtons();
}

PipelineView::~PipelineView() {
  if (m_worker) m_worker->cancel();
  m_thread->quit();
  m_thread->wait();
}

void PipelineView::chooseDescription() {
  const QString file = QFileDialog::getOpenFileName(this, tr("Pipeline description"), {},
                                                    tr("Pipeline descriptions (*.json)"));
  if (!file.isEmpty()) setDescription(file);
}

void PipelineView::setDescription(const QString& file, const QString& dir) {
  m_description = file;
  m_dir = dir;
  m_file->setText(QFileInfo(file).fileName());
  m_file->setToolTip(file);
  m_steps->clear();
  m_status->clear();
  updateButtons();
}

void PipelineView::start() {
  if (m_running || m_description.isEmpty()) return;
  m_running = true;
  m_generateJob.clear();
  m_reportPath.clear();
  m_status->setText(tr("Reading %1…").arg(QFileInfo(m_description).fileName()));
  updateButtons();
  QMetaObject::invokeMethod(m_worker, "run", Qt::QueuedConnection, Q_ARG(QString, m_description),
                            Q_ARG(QString, m_dir));
}

void PipelineView::onLoaded(const QStringList& steps, const QString& dir) {
  m_steps->clear();
  for (const QString& name : steps) {
    auto* item = new QTreeWidgetItem(m_steps);
    item->setText(Step, name);
    item->setText(State, tr("waiting"));
    auto* bar = new QProgressBar(m_steps);
    bar->setRange(0, 1);
    bar->setValue(0);
    bar->setTextVisible(true);
    m_steps->setItemWidget(item, Progress, bar);
  }
  m_status->setText(tr("Running in %1").arg(dir));
}

QProgressBar* PipelineView::progressBar(int index) const {
  QTreeWidgetItem* item = m_steps->topLevelItem(index);
  return item ? qobject_cast<QProgressBar*>(m_steps->itemWidget(item, Progress)) : nullptr;
}

void PipelineView::setState(int index, const QString& state) {
  if (QTreeWidgetItem* item = m_steps->topLevelItem(index)) item->setText(State, state);
}

QString PipelineView::stepState(int i) const {
  QTreeWidgetItem* item = m_steps->topLevelItem(i);
  return item ? item->text(State) : QString();
}

void PipelineView::onStepStarted(int index) {
  setState(index, tr("running"));
  if (QProgressBar* bar = progressBar(index)) bar->setRange(0, 0);  // busy until rows count
}

void PipelineView::onStepProgress(int index, qint64 done, qint64 total, double tokensPerSecond) {
  QProgressBar* bar = progressBar(index);
  if (!bar) return;
  if (total > 0) {
    bar->setRange(0, static_cast<int>(std::min<qint64>(total, 1 << 30)));
    bar->setValue(static_cast<int>(std::min(done, total)));
    bar->setFormat(tr("%1 / %2").arg(formatCount(done), formatCount(total)));
  }
  setState(index, tr("running · %1").arg(formatRate(tokensPerSecond, tr("tok/s"))));
}

void PipelineView::onStepDone(int index, bool cached, qint64 rowsIn, qint64 rowsOut,
                              qint64 modelCalls, qint64 generatedTokens, double seconds,
                              const QString& note) {
  QTreeWidgetItem* item = m_steps->topLevelItem(index);
  if (!item) return;
  item->setText(State, cached ? tr("cached (unchanged)") : tr("done"));
  item->setToolTip(State, cached ? tr("Its inputs and options did not change: its results were "
                                      "kept and nothing ran.")
                                 : QString());
  item->setText(Rows, tr("%1 → %2").arg(formatCount(rowsIn), formatCount(rowsOut)));
  item->setText(Calls, formatCount(modelCalls));
  item->setText(Tokens, formatCount(generatedTokens));
  item->setText(Time, tr("%1 s").arg(formatDecimal(seconds, 1)));
  item->setText(Note, note);
  item->setToolTip(Note, note);
  if (QProgressBar* bar = progressBar(index)) {
    bar->setRange(0, 1);
    bar->setValue(1);
    bar->setFormat(cached ? tr("cached") : tr("done"));
  }
}

void PipelineView::onFinished(const QString& generateJob, const QString& exportDir,
                              const QString& reportPath, qint64 rowsExported) {
  m_generateJob = generateJob;
  m_reportPath = reportPath;
  m_exportDir = exportDir;
  onEnded(exportDir.isEmpty()
              ? tr("Done.")
              : tr("Done: %1 rows in %2").arg(formatCount(rowsExported), exportDir));
}

void PipelineView::onEnded(const QString& message) {
  m_running = false;
  for (int i = 0; i < m_steps->topLevelItemCount(); ++i) {
    const QString state = stepState(i);
    if (state.startsWith(tr("running"))) {
      setState(i, tr("stopped"));
      if (QProgressBar* bar = progressBar(i); bar && bar->maximum() == 0) bar->setRange(0, 1);
    }
  }
  m_status->setText(message);
  updateButtons();
  emit runEnded();
}

void PipelineView::updateButtons() {
  m_open->setEnabled(!m_running);
  m_run->setEnabled(!m_running && !m_description.isEmpty());
  m_stop->setEnabled(m_running);
  m_review->setEnabled(!m_running && !m_generateJob.isEmpty());
  m_report->setEnabled(!m_running && !m_reportPath.isEmpty());
}

}  // namespace sluice::ui
