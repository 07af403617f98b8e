// `sluice gui`: the desktop application, or the same job headless when there is no display.
#pragma once

namespace sluice::ui {

// Runs the GUI (or the headless demo job) with the process's arguments; returns the exit code.
int gui_main(int argc, char** argv);

}  // namespace sluice::ui
