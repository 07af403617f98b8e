// MainWindow's "Serve on port …" wiring: the Server page, the worker's serving signals and the
// served traffic in the plots between jobs.
#include <QLabel>
#include <QStatusBar>

#include "app/engine_worker.h"
#include "ui/live/kv_block_map_widget.h"
#include "ui/live/live_plots.h"
#include "ui/serve/serve_panel.h"
#include "ui/setup/setup_steps.h"
#include "ui/window/main_window.h"

namespace sluice::ui {

// "Serve on port …": the worker serves from the engine the jobs use; between jobs the served
// traffic feeds the live plots and the block map (a job's own statistics cover it while one runs).
void MainWindow::connectServing() {
  connect(m_serve, &ServePanel::serveRequested, this,
          [this](const ServerOptions& options) { m_worker->startServing(options, currentSpec()); });
  connect(m_serve, &ServePanel::stopRequested, this, [this] { m_worker->stopServing(); });
  connect(m_serve, &ServePanel::servingChanged, m_statusServing, &QLabel::setText);
  connect(m_worker, &EngineWorker::servingStarted, m_serve, &ServePanel::setServing);
  connect(m_worker, &EngineWorker::servingStopped, m_serve, &ServePanel::setStopped);
  connect(m_worker, &EngineWorker::servingFailed, this, [this](const QString& message) {
    m_serve->setFailed(message);
    statusBar()->showMessage(message, 10000);
  });
  connect(m_worker, &EngineWorker::servingStatsUpdated, this,
          [this](const StepStats& stats, bool startsSeries) {
            if (isRunning()) return;
            if (startsSeries) {
              m_plots->clear();
              m_plots->setRemote(false);  // the served traffic is this engine's own
            }
            m_plots->addStats(stats);
          });
  connect(m_worker, &EngineWorker::servingMapUpdated, this,
          [this](const KvBlockMap& map, const MemorySample& sample) {
            if (isRunning()) return;
            m_kvMap->setMap(map);
            m_plots->addMemory(sample);
          });
}

void MainWindow::showServePanel() {
  m_setup->setCurrentWidget(m_serve);
}

}  // namespace sluice::ui
