#include "ui/live/run_controls.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <algorithm>

#include "ui/common/number_format.h"

namespace sluice::ui {

RunControls::RunControls(QWidget* parent) : QWidget(parent) {
  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  m_start = new QPushButton(tr("Start"), this);
  m_start->setToolTip(tr("Run the model over the whole file (Ctrl+Return)"));
  m_pause = new QPushButton(tr("Pause"), this);
  m_pause->setCheckable(true);
  m_pause->setToolTip(tr("Hold the engine between steps; nothing is lost (Ctrl+P)"));
  m_cancel = new QPushButton(tr("Cancel"), this);
  m_cancel->setToolTip(
      tr("Stop, after a confirmation; finished rows stay in the job, which can be "
         "resumed"));
  m_progress = new QProgressBar(this);
  m_progress->setRange(0, 1000);
  // The bar's text goes in a label beside it: text drawn over the bar is hard to read where the
  // fill ends (half of it on the fill, half on the groove).
  m_progress->setTextVisible(false);
  m_progressText = new QLabel(this);
  m_progressText->setObjectName("progressText");
  m_progressText->setMinimumWidth(m_progressText->fontMetrics().horizontalAdvance(
      tr("%1 of %2 rows · 100%").arg(formatCount(99999), formatCount(99999))));
  m_label = new QLabel(this);
  m_label->setMinimumWidth(160);
  layout->addWidget(m_start);
  layout->addWidget(m_pause);
  layout->addWidget(m_cancel);
  layout->addWidget(m_progress, 1);
  layout->addWidget(m_progressText);
  layout->addWidget(m_label);
  connect(m_start, &QPushButton::clicked, this, &RunControls::startClicked);
  connect(m_pause, &QPushButton::toggled, this, [this](bool paused) {
    m_pause->setText(paused ? tr("Resume") : tr("Pause"));
    emit pauseToggled(paused);
  });
  connect(m_cancel, &QPushButton::clicked, this, &RunControls::cancelClicked);
  setState(State::Idle);
}

void RunControls::setState(State state) {
  m_state = state;
  const bool active = state != State::Idle;
  m_start->setEnabled(!active && m_ready);
  m_pause->setEnabled(state == State::Running || state == State::Paused);
  m_cancel->setEnabled(active && state != State::Cancelling);
  if (state == State::Idle || state == State::Loading) {
    const QSignalBlocker block(m_pause);
    m_pause->setChecked(false);
    m_pause->setText(tr("Pause"));
  }
  if (state == State::Cancelling) m_label->setText(tr("cancelling…"));
  if (state == State::Paused) m_label->setText(tr("paused"));
  if (state == State::Idle || state == State::Running) m_label->clear();
  emit stateChanged();
}

void RunControls::setReady(bool ready) {
  m_ready = ready;
  m_start->setEnabled(m_state == State::Idle && m_ready);
  emit stateChanged();
}

void RunControls::setProgress(qint64 rowsDone, qint64 rowsTotal) {
  m_rows = RowsProgress{rowsDone, rowsTotal};
  if (rowsTotal < 0) {
    m_progress->setRange(0, 1000);
    m_progress->setValue(0);
    m_progress->setFormat(tr("%1 rows done · counting the rows…").arg(formatCount(rowsDone)));
    showProgressText();
    return;
  }
  // The bar's range is an int: scale a huge job down to per-mille.
  const double fraction = rowsTotal > 0 ? std::min(1.0, double(rowsDone) / rowsTotal) : 1.0;
  m_progress->setRange(0, 1000);
  m_progress->setValue(static_cast<int>(1000 * fraction));
  m_progress->setFormat(tr("%1 of %2 rows · %3%")
                            .arg(formatCount(rowsDone), formatCount(rowsTotal))
                            .arg(static_cast<int>(100 * fraction)));
  showProgressText();
}

void RunControls::showProgressText() {
  m_progressText->setText(m_progress->text());
}

void RunControls::setLoading(double fraction, const QString& stage) {
  m_progress->setValue(static_cast<int>(1000 * fraction));
  m_progress->setFormat(tr("loading %p%"));
  showProgressText();
  m_label->setText(stage.left(40));
}

void RunControls::clearProgress() {
  m_rows.reset();
  m_progress->setValue(0);
  m_progress->setFormat(QString());
  showProgressText();
}

void RunControls::clearLoading() {
  m_label->clear();
  if (m_rows)
    setProgress(m_rows->rowsDone, m_rows->rowsTotal);
  else
    clearProgress();
}

QString RunControls::statusText() const {
  return m_label->text();
}

}  // namespace sluice::ui
