// sluice: the desktop application and its headless subcommands. Subcommands run on a
// QCoreApplication and never need a display; `sluice gui` (the default with no command) opens
// the window, or runs the same job headless when there is no display.
#include <QCoreApplication>
#include <QStringList>
#include <cstdio>
#include <cstring>

#include "app/cli/cli_command.h"
#include "app/headless_job.h"
#include "engine/core/build_info.h"

#ifdef SLUICE_HAS_GUI
#include "ui/window/gui_main.h"
#endif

int main(int argc, char** argv) {
  const char* command = argc > 1 ? argv[1] : "";
  if (std::strcmp(command, "--version") == 0 || std::strcmp(command, "-V") == 0) {
    return sluice::cli::run_version();
  }
  if (std::strcmp(command, "--help") == 0 || std::strcmp(command, "-h") == 0 ||
      std::strcmp(command, "help") == 0) {
    sluice::cli::print_usage();
    return 0;
  }
  if (command[0] == '\0' || std::strcmp(command, "gui") == 0) {
#ifdef SLUICE_HAS_GUI
    return sluice::ui::gui_main(argc, argv);
#else
    // No GUI in this build: `sluice gui` runs its job headless, as it does without a display.
    QCoreApplication app(argc, argv);
    QStringList args = QCoreApplication::arguments().mid(2);
    return sluice::run_headless_job(args);
#endif
  }

  QCoreApplication app(argc, argv);
  QCoreApplication::setApplicationName("sluice");
  QCoreApplication::setApplicationVersion(sluice::build_info::kVersion);
  QStringList args = QCoreApplication::arguments();
  args.removeFirst();  // program
  args.removeFirst();  // command
  if (std::strcmp(command, "generate") == 0) return sluice::cli::run_generate(args);
  if (std::strcmp(command, "tokenize") == 0) return sluice::cli::run_tokenize(args);
  if (std::strcmp(command, "bench") == 0) return sluice::cli::run_bench(args);
  if (std::strcmp(command, "render-template") == 0) return sluice::cli::run_render_template(args);
  if (std::strcmp(command, "jobs") == 0) return sluice::cli::run_jobs(args);
  if (std::strcmp(command, "serve") == 0) return sluice::cli::run_serve(args);
  if (std::strcmp(command, "grammar") == 0) return sluice::cli::run_grammar(args);
  if (std::strcmp(command, "pipeline") == 0) return sluice::cli::run_pipeline(args);
  std::fprintf(stderr, "sluice: unknown command '%s'; see `sluice --help`\n", command);
  return 2;
}
