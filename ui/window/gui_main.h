// `sluice gui`: the desktop application, or the same job headless when there is no display.
#pragma once

#include <QStringList>

class QCommandLineParser;

namespace sluice::ui {

class MainWindow;

// Returns whether a launch with these (processed) options is scripted: any option that says what
// to run or show (--start, --model, --dataset, --job, --endpoint, a structured output, --export,
// --compare, ...). A scripted launch runs on its options and the defaults; any other restores the
// last session first (MainWindow::restoreLastSession).
bool isScriptedLaunch(const QCommandLineParser& parser);

// Applies `sluice gui` options (arguments[0] is the program) to the window; returns false after
// printing why on a bad option or combination. A --job that does not exist is created by the run.
// Without a scripting option (isScriptedLaunch) the window first restores the last session, and
// the options given apply over it.
bool applyGuiOptions(const QStringList& arguments, MainWindow& window);

// Runs the GUI (or the headless demo job) with the process's arguments; returns the exit code.
int gui_main(int argc, char** argv);

}  // namespace sluice::ui
