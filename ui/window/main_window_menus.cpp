// MainWindow's menus, toolbar and View menu. The toolbar shows the menus' own actions (one
// QAction per command), whose enabled and checked states follow the run controls' buttons.
#include <QAction>
#include <QKeySequence>
#include <QMenuBar>
#include <QMessageBox>
#include <QPushButton>
#include <QTabWidget>
#include <QToolBar>

#include "engine/core/build_info.h"
#include "ui/live/live_plots.h"
#include "ui/live/run_controls.h"
#include "ui/setup/dataset_panel.h"
#include "ui/setup/model_panel.h"
#include "ui/setup/setup_steps.h"
#include "ui/window/main_window.h"

namespace sluice::ui {

void MainWindow::buildMenus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  m_actions.openModel = file->addAction(tr("Open &model…"), QKeySequence::Open, this,
                                        [this] { m_modelPanel->openDialog(); });
  m_actions.openDataset =
      file->addAction(tr("Open &instructions…"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O),
                      this, [this] { m_dataset->openDialog(); });
  file->addAction(tr("Open &job…"), QKeySequence(Qt::CTRL | Qt::Key_J), this,
                  &MainWindow::openJobDialog);
  m_actions.exportJob = file->addAction(tr("&Export…"), QKeySequence(Qt::CTRL | Qt::Key_E), this,
                                        &MainWindow::exportCurrentJob);
  file->addSeparator();
  file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);
  buildRunMenu();
  buildToolBar();
  buildViewMenu();
  QMenu* help = menuBar()->addMenu(tr("&Help"));
  help->addAction(tr("&About Sluice"), this, [this] {
    QMessageBox::about(
        this, tr("About Sluice"),
        tr("<b>Sluice %1</b><br>Dataset generation with a local LLM: continuous batching over a "
           "paged KV cache.")
            .arg(build_info::kVersion));
  });
}

void MainWindow::buildRunMenu() {
  QMenu* run = menuBar()->addMenu(tr("&Run"));
  m_actions.start = run->addAction(tr("&Start"), QKeySequence(Qt::CTRL | Qt::Key_Return), this,
                                   &MainWindow::start);
  m_actions.pause = run->addAction(tr("&Pause / resume"), QKeySequence(Qt::CTRL | Qt::Key_P));
  m_actions.pause->setCheckable(true);
  QPushButton* pauseButton = m_runControls->pauseButton();
  connect(m_actions.pause, &QAction::triggered, pauseButton, &QPushButton::setChecked);
  connect(pauseButton, &QPushButton::toggled, m_actions.pause, &QAction::setChecked);
  // No shortcut: Esc clears search boxes, and a run is never one stray key from stopping.
  m_actions.cancel = run->addAction(tr("&Cancel…"), this, &MainWindow::confirmCancel);
  run->addSeparator();
  run->addAction(tr("Serve on p&ort…"), this, &MainWindow::showServePanel);
  // The actions are enabled exactly when their buttons are (the buttons follow the run state).
  const auto follow = [this] {
    m_actions.start->setEnabled(m_runControls->startButton()->isEnabled());
    m_actions.pause->setEnabled(m_runControls->pauseButton()->isEnabled());
    m_actions.pause->setChecked(m_runControls->pauseButton()->isChecked());
    m_actions.cancel->setEnabled(m_runControls->cancelButton()->isEnabled());
  };
  connect(m_runControls, &RunControls::stateChanged, this, follow);
  follow();
}

void MainWindow::buildToolBar() {
  m_toolBar = addToolBar(tr("Main toolbar"));
  m_toolBar->setObjectName("mainToolBar");  // saveState() needs a name
  m_toolBar->setMovable(false);
  m_toolBar->setToolButtonStyle(Qt::ToolButtonTextOnly);
  m_toolBar->addAction(m_actions.openModel);
  m_toolBar->addAction(m_actions.openDataset);
  m_toolBar->addSeparator();
  m_toolBar->addAction(m_actions.start);
  m_toolBar->addAction(m_actions.pause);
  m_toolBar->addAction(m_actions.cancel);
  m_toolBar->addSeparator();
  m_toolBar->addAction(m_actions.exportJob);
}

void MainWindow::buildViewMenu() {
  m_viewMenu = menuBar()->addMenu(tr("&View"));
  QAction* toolBar = m_toolBar->toggleViewAction();
  toolBar->setText(tr("&Toolbar"));
  m_viewMenu->addAction(toolBar);
  m_actions.showSetup = m_viewMenu->addAction(tr("&Setup panel"));
  m_actions.showSetup->setCheckable(true);
  m_actions.showSetup->setChecked(true);
  connect(m_actions.showSetup, &QAction::toggled, m_setup, &QWidget::setVisible);
  m_actions.showPlots = m_viewMenu->addAction(tr("Live &plots"));
  m_actions.showPlots->setCheckable(true);
  m_actions.showPlots->setChecked(true);
  connect(m_actions.showPlots, &QAction::toggled, this,
          [this](bool shown) { m_tabs->setTabVisible(m_tabs->indexOf(m_plots), shown); });
  m_viewMenu->addSeparator();
  // One action per tab, Ctrl+1 … Ctrl+9 in tab order; showing a hidden tab shows it again.
  for (int i = 0; i < m_tabs->count(); ++i) {
    QWidget* page = m_tabs->widget(i);
    QAction* tab = m_viewMenu->addAction(m_tabs->tabText(i));
    if (i < 9) tab->setShortcut(QKeySequence(Qt::CTRL | static_cast<Qt::Key>(Qt::Key_1 + i)));
    connect(tab, &QAction::triggered, this, [this, page] {
      if (page == m_plots) m_actions.showPlots->setChecked(true);
      m_tabs->setCurrentWidget(page);
    });
    m_actions.tabs.append(tab);
  }
}

}  // namespace sluice::ui
