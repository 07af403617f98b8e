// `sluice gui`: the desktop application, or the same job headless when there is no display.
#pragma once

#include <QStringList>

namespace sluice::ui {

class MainWindow;

// Applies `sluice gui` options (arguments[0] is the program) to the window; returns false after
// printing why on a bad option or combination. A --job that does not exist is created by the run.
bool applyGuiOptions(const QStringList& arguments, MainWindow& window);

// Runs the GUI (or the headless demo job) with the process's arguments; returns the exit code.
int gui_main(int argc, char** argv);

}  // namespace sluice::ui
