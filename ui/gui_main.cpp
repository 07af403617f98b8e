#include "ui/gui_main.h"

#include <QApplication>
#include <QCommandLineParser>
#include <cstdio>
#include <cstdlib>

#include "app/generation_job.h"
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

// No display: run the preloaded job in this process and print every row as it finishes.
int run_headless(const GuiArgs& args) {
  if (args.model.isEmpty() || args.dataset.isEmpty()) {
    std::fprintf(stderr,
                 "sluice gui: no display; give --model and --dataset to run the job headless\n");
    return 2;
  }
  std::fprintf(stderr, "sluice gui: no display found; running the job headless\n");
  GenerationJobSpec spec;
  spec.model_path = args.model.toStdString();
  spec.input_path = args.dataset.toStdString();
  spec.sampling.max_tokens = 128;
  try {
    GenerationJob job(spec);
    job.load();
    std::fprintf(stderr, "model: %s\n", job.session().model->config.describe().c_str());
    const size_t failed = job.run(
        [](const RowOutcome& row) {
          std::printf("%s\n", dump_jsonl_row(row.json).c_str());
          std::fflush(stdout);
        },
        nullptr);
    std::fprintf(stderr, "done: %zu rows, %zu failed\n", job.rows().size(), failed);
    return failed > 0 ? 3 : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sluice gui: %s\n", e.what());
    return 1;
  }
}

}  // namespace

int gui_main(int argc, char** argv) {
  if (!has_display()) {
    QStringList arguments;
    for (int i = 0; i < argc; ++i) arguments << QString::fromLocal8Bit(argv[i]);
    if (arguments.size() > 1 && arguments[1] == "gui") arguments.removeAt(1);
    return run_headless(parse(arguments));
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
