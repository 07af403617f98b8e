#include "ui/gui_main.h"

#include <QApplication>
#include <QCommandLineParser>

#include "app/headless_job.h"
#include "engine/core/build_info.h"
#include "ui/main_window.h"

namespace sluice::ui {

namespace {

bool has_display() {
  return !qEnvironmentVariableIsEmpty("DISPLAY") ||
         !qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY") ||
         !qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM");
}

struct GuiArgs {
  QString model;
  QString dataset;
  bool start = false;
  bool quit_when_done = false;
};

GuiArgs parse(const QStringList& arguments) {
  QCommandLineParser parser;
  parser.setApplicationDescription("The Sluice desktop application.");
  parser.addHelpOption();
  parser.addOptions({
      {"model", "Model to preload.", "PATH"},
      {"dataset", "Instruction file to preload.", "PATH"},
      {"start", "Start generating at once."},
      {"quit-when-done", "Quit when the job finishes."},
  });
  parser.process(arguments);
  return GuiArgs{parser.value("model"), parser.value("dataset"), parser.isSet("start"),
                 parser.isSet("quit-when-done")};
}

}  // namespace

int gui_main(int argc, char** argv) {
  if (!has_display()) {
    QStringList arguments;
    for (int i = 2; i < argc; ++i) arguments << QString::fromLocal8Bit(argv[i]);
    return run_headless_job(arguments);
  }
  QApplication app(argc, argv);
  QApplication::setApplicationName("Sluice");
  QApplication::setOrganizationName("Sluice");
  QApplication::setApplicationVersion(build_info::kVersion);
  QStringList arguments = QApplication::arguments();
  if (arguments.size() > 1 && arguments[1] == "gui") arguments.removeAt(1);
  const GuiArgs args = parse(arguments);
  MainWindow window;
  window.preload(args.model, args.dataset);
  window.setQuitWhenDone(args.quit_when_done);
  window.show();
  if (args.start) window.start();
  return QApplication::exec();
}

}  // namespace sluice::ui
