// MainWindow's relaunch: an interactive launch shows the last session's parameters and files and
// says what it restored; a scripted one (gui_main) never gets here and starts from the defaults.
#include "ui/setup/changed_settings.h"
#include "ui/setup/parameters_panel.h"
#include "ui/window/main_window.h"

namespace sluice::ui {

void MainWindow::restoreLastSession(const QString& device) {
  if (auto spec = m_settings.lastSpec()) {
    if (!device.isEmpty()) {  // the command line's device replaces the last one, remote included
      spec->device = device.toStdString();
      spec->remote = RemoteSpec{};
    }
    m_parameters->setFromSpec(*spec);
    m_parameters->setRestoredSettings(describeChangedSettings(*spec));
  }
  restoreLastFiles();
  updateSetupSteps();
}

}  // namespace sluice::ui
