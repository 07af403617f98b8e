#include "ui/window/gui_main.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QFileInfo>
#include <QPushButton>
#include <QSpinBox>
#include <QTabWidget>
#include <QTableView>
#include <QTimer>
#include <cstdio>

#include "app/headless_job.h"
#include "engine/core/build_info.h"
#include "ui/jobs/job_compare_dialog.h"
#include "ui/jobs/job_compare_model.h"
#include "ui/jobs/jobs_view.h"
#include "ui/serve/serve_panel.h"
#include "ui/setup/parameters_panel.h"
#include "ui/setup/remote_servers_panel.h"
#include "ui/setup/structured_output_panel.h"
#include "ui/window/app_palette.h"
#include "ui/window/main_window.h"
#include "ui/window/screenshot_recorder.h"

namespace sluice::ui {

namespace {

bool has_display() {
  return !qEnvironmentVariableIsEmpty("DISPLAY") ||
         !qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY") ||
         !qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM");
}

// Shows --json-schema or --choice in the parameters' structured output section (the Start button
// waits while it is invalid; a scripted start reports why and exits 1).
bool applyStructuredOutput(const QCommandLineParser& parser, MainWindow& window) {
  StructuredOutputPanel* panel = window.parametersPanel()->structuredOutput();
  if (parser.isSet("json-schema") && parser.isSet("choice")) {
    std::fprintf(stderr, "sluice gui: give --json-schema or --choice, not both\n");
    return false;
  }
  if (parser.isSet("json-schema")) {
    panel->setMode(StructuredOutputPanel::Mode::JsonSchema);
    if (!panel->loadFile(parser.value("json-schema"))) {
      std::fprintf(stderr, "sluice gui: %s\n", qPrintable(panel->statusText()));
      return false;
    }
  } else if (parser.isSet("choice")) {
    panel->setMode(StructuredOutputPanel::Mode::Choice);
    panel->setText(parser.values("choice").join('\n'));
    panel->validateNow();
  } else {
    return true;
  }
  window.showParameters(panel);
  return true;
}

// --serve-port: turns "Serve on port" on once the model has loaded, and shows the Server page.
bool applyServePort(const QString& value, MainWindow& window) {
  bool ok = false;
  const int port = value.toInt(&ok);
  if (!ok || port < 0 || port > 65535) {
    std::fprintf(stderr, "sluice gui: --serve-port expects a port from 0 to 65535, not '%s'\n",
                 qPrintable(value));
    return false;
  }
  ServePanel* panel = window.servePanel();
  panel->portBox()->setValue(port);
  window.showServePanel();
  QObject::connect(&window, &MainWindow::modelReady, panel, [panel] {
    if (!panel->serveButton()->isChecked()) panel->serveButton()->setChecked(true);
  });
  return true;
}

// --compare A --compare B: opens the comparison once the window shows; with --screenshot, selects
// the first row and saves a picture once its full texts are shown, then quits.
bool compareJobs(const QCommandLineParser& parser, MainWindow& window) {
  const QStringList jobs = parser.values("compare");
  if (jobs.size() != 2) {
    std::fprintf(stderr, "sluice gui: --compare is given twice, once for each job\n");
    return false;
  }
  const QString screenshots = parser.value("screenshot");
  QMetaObject::invokeMethod(
      &window,
      [&window, jobs, screenshots] {
        JobCompareDialog* dialog = window.jobsView()->compareJobs(jobs[0], jobs[1]);
        if (screenshots.isEmpty()) return;
        const auto capture = [dialog, screenshots] {
          const QString path = ScreenshotRecorder(dialog, screenshots, 0).capture("compare");
          std::fprintf(stderr, "sluice gui: saved %s\n", qPrintable(path));
          QCoreApplication::exit(path.isEmpty() ? 1 : 0);
        };
        QObject::connect(dialog->model(), &JobCompareModel::pageLoaded, dialog,
                         [dialog] { dialog->rowsTable()->selectRow(0); });
        QObject::connect(dialog, &JobCompareDialog::detailShown, dialog, capture,
                         Qt::QueuedConnection);
        QObject::connect(dialog->model(), &JobCompareModel::loadFailed, dialog, capture);
        QObject::connect(dialog, &JobCompareDialog::compared, dialog, [dialog, capture] {
          if (!dialog->errorText().isEmpty() || dialog->model()->rowCount() == 0) capture();
        });
      },
      Qt::QueuedConnection);
  return true;
}

// Chooses "Remote server(s)…" with the --endpoint URLs (and --remote-model) in the parameters.
void applyRemote(const QCommandLineParser& parser, MainWindow& window) {
  if (!parser.isSet("endpoint")) return;
  RemoteServersPanel* panel = window.parametersPanel()->remoteServers();
  RemoteSpec remote = panel->remoteSpec();
  remote.endpoints.clear();
  for (const QString& url : parser.values("endpoint"))
    remote.endpoints.push_back(url.toStdString());
  if (parser.isSet("remote-model")) remote.model = parser.value("remote-model").toStdString();
  panel->setRemoteSpec(remote);
  window.parametersPanel()->setRemote(true);
  // Once the window is shown and laid out: the section only scrolls into view then.
  QTimer::singleShot(0, &window, [&window, panel] { window.showParameters(panel); });
}

// --tab NAME: shows the tab whose title is NAME (case and spaces aside: "pairs", "kv-blocks").
bool applyTab(const QString& name, MainWindow& window) {
  QTabWidget* tabs = window.tabs();
  QStringList names;
  for (int i = 0; i < tabs->count(); ++i) {
    const QString tabName = tabs->tabText(i).remove('&').toLower().replace(' ', '-');
    if (tabName == name.toLower()) {
      tabs->setCurrentIndex(i);
      return true;
    }
    names << tabName;
  }
  std::fprintf(stderr, "sluice gui: --tab expects one of %s, not '%s'\n",
               qPrintable(names.join(", ")), qPrintable(name));
  return false;
}

// Options that say what to run or show: with any of them a launch is scripted. The rest (the
// palette, pictures, the device, "Serve on port") only adjust an interactive launch.
constexpr const char* kScriptedOptions[] = {
    "start",    "quit-when-done", "export",      "model",  "dataset", "job",
    "endpoint", "remote-model",   "json-schema", "choice", "compare"};

}  // namespace

bool isScriptedLaunch(const QCommandLineParser& parser) {
  for (const char* option : kScriptedOptions) {
    if (parser.isSet(option)) return true;
  }
  return false;
}

bool applyGuiOptions(const QStringList& arguments, MainWindow& window) {
  QCommandLineParser parser;
  parser.setApplicationDescription(
      "The Sluice desktop application.\n\nA launch with any of --start, --quit-when-done, "
      "--export, --model, --dataset, --job, --endpoint, --remote-model, --json-schema, --choice "
      "or --compare is scripted: it runs on what its options say and the defaults for the rest. "
      "Without them the last session's parameters, model and instruction file are restored, and "
      "the Parameters step says what was restored; --device, --serve-port, --palette, --tab and "
      "--screenshot apply over it.");
  parser.addHelpOption();
  parser.addOptions({
      {"model", "Model to load at start.", "PATH"},
      {"dataset", "Instruction file to open at start.", "PATH"},
      {"device",
       "Device to run on: cpu, cuda, cuda:N or auto (default: cpu, or the last session's when "
       "restored).",
       "DEVICE"},
      {"endpoint",
       "Run on this OpenAI-compatible server instead of a local model (repeat for more).", "URL"},
      {"remote-model", "With --endpoint: the model to ask the servers for.", "NAME"},
      {"job", "Job file to open (Start resumes it), or to create when it does not exist.", "PATH"},
      {"start", "Start generating as soon as the model is loaded."},
      {"quit-when-done", "Quit when the run ends (exit status 0 when it finished)."},
      {"export", "With --quit-when-done: export the job when done, e.g. jsonl:out.jsonl.",
       "FORMAT:PATH"},
      {"screenshot",
       "Save pictures of the window to DIR (every --screenshot-every seconds and at the end).",
       "DIR"},
      {"screenshot-every", "Seconds between pictures (default 5).", "SECONDS"},
      {"json-schema", "Constrain every output to the JSON Schema in FILE (Parameters).", "FILE"},
      {"choice", "Constrain every output to one of the texts given (repeat for each).", "TEXT"},
      {"serve-port",
       "Serve the model on this port once it is loaded (Server page; 0 = any free port).", "PORT"},
      {"palette", "Colours: system (default), dark or light.", "NAME"},
      {"tab",
       "Show this tab at start: live, kv-blocks, timeline, results, pairs or jobs (e.g. --job J "
       "--tab pairs to review a job's pairs).",
       "NAME"},
      {"compare",
       "Give twice: compare the two jobs (as the Jobs tab's Compare… does); with --screenshot, "
       "save a picture of the comparison and quit.",
       "JOB"},
  });
  parser.process(arguments);
  // Restored first, so every option given wins over what the last session used.
  if (!isScriptedLaunch(parser)) window.restoreLastSession(parser.value("device"));
  if (parser.isSet("palette") && !applyPaletteNamed(parser.value("palette"))) {
    std::fprintf(stderr, "sluice gui: --palette expects system, dark or light\n");
    return false;
  }
  if (parser.isSet("export")) {
    const QString value = parser.value("export");
    const auto colon = value.indexOf(':');
    if (colon <= 0) {
      std::fprintf(stderr, "sluice gui: --export expects FORMAT:PATH, e.g. jsonl:out.jsonl\n");
      return false;
    }
    window.setExportWhenDone(value.left(colon), value.mid(colon + 1));
  }
  if (parser.isSet("screenshot")) {
    window.setScreenshots(
        parser.value("screenshot"),
        parser.isSet("screenshot-every") ? parser.value("screenshot-every").toDouble() : 5.0);
  }
  // A job file that does not exist yet is where the new run goes (as `generate --job` does).
  const bool resumesJob = parser.isSet("job") && QFileInfo::exists(parser.value("job"));
  const bool createsJob = parser.isSet("job") && !resumesJob;
  const bool hasRunner = parser.isSet("model") || parser.isSet("endpoint");
  if (createsJob && !(hasRunner && parser.isSet("dataset"))) {
    std::fprintf(stderr,
                 "sluice gui: the job %s does not exist; give --model (or --endpoint) and "
                 "--dataset to create it\n",
                 qPrintable(parser.value("job")));
    return false;
  }
  if (parser.isSet("start") && !resumesJob && !(hasRunner && parser.isSet("dataset"))) {
    std::fprintf(stderr,
                 "sluice gui: --start needs --model (or --endpoint) and --dataset, or an existing "
                 "--job\n");
    return false;
  }
  if (parser.isSet("serve-port") && !applyServePort(parser.value("serve-port"), window))
    return false;
  if (parser.isSet("device")) window.setDevice(parser.value("device"));
  applyRemote(parser, window);
  if (!applyStructuredOutput(parser, window)) return false;
  window.setQuitWhenDone(parser.isSet("quit-when-done"));
  if (resumesJob) window.openJob(parser.value("job"));
  if (createsJob) window.setNewJobPath(parser.value("job"));
  if (parser.isSet("dataset")) window.preloadDataset(parser.value("dataset"));
  window.setStartWhenReady(parser.isSet("start"));
  if (parser.isSet("model")) {
    window.preloadModel(parser.value("model"));
  } else if (parser.isSet("start") && (resumesJob || !parser.isSet("endpoint"))) {
    // Resuming a job loads its own model: nothing to wait for. (A remote run starts once its
    // instruction file has been read.)
    QMetaObject::invokeMethod(&window, &MainWindow::start, Qt::QueuedConnection);
  }
  if (parser.isSet("compare") && !compareJobs(parser, window)) return false;
  // After --job, which shows the Results tab.
  if (parser.isSet("tab") && !applyTab(parser.value("tab"), window)) return false;
  return true;
}

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
  QApplication::setDesktopFileName("sluice");
  QStringList arguments = QApplication::arguments();
  if (arguments.size() > 1 && arguments[1] == "gui") arguments.removeAt(1);
  MainWindow window;
  if (!applyGuiOptions(arguments, window)) return 2;
  window.show();
  return QApplication::exec();
}

}  // namespace sluice::ui
