// The command line wins over remembered settings (issue 33): a scripted `sluice gui` launch runs
// on what its options say and the defaults for the rest, whatever the last session used (a remote
// endpoint, n = 2, temperature 0.9, 128 tokens, a JSON Schema); an interactive launch restores
// the last session and the Parameters step says what it restored.
#include <QAbstractSpinBox>
#include <QCoreApplication>
#include <QFile>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <memory>

#include "engine/jobs/job_store.h"
#include "tests/gui/gui_shots.h"
#include "tests/support/test_paths.h"
#include "ui/setup/changed_settings.h"
#include "ui/setup/dataset_panel.h"
#include "ui/setup/parameters_panel.h"
#include "ui/setup/remote_servers_panel.h"
#include "ui/setup/setup_steps.h"
#include "ui/setup/structured_output_panel.h"
#include "ui/window/app_palette.h"
#include "ui/window/app_settings.h"
#include "ui/window/gui_main.h"
#include "ui/window/main_window.h"

using sluice::ui::MainWindow;
using Mode = sluice::ui::StructuredOutputPanel::Mode;

namespace {

QString shared(const char* relative) {
  return QString::fromStdString(sluice::test::shared_path(relative));
}

const char* const kRememberedEndpoint = "http://127.0.0.1:9/v1";  // nothing listens there
const char* const kSchema = R"({"type": "object", "properties": {"name": {"type": "string"}}})";
constexpr int kParametersStep = 2;

// What an earlier session left in the settings: a remote run with n = 2, temperature 0.9,
// 128 tokens and a JSON Schema, over an instruction file.
void rememberLastSession(const QString& dataset) {
  sluice::GenerationSpec spec;
  spec.sampling.n = 2;
  spec.sampling.temperature = 0.9f;
  spec.sampling.max_tokens = 128;
  auto schema = std::make_shared<sluice::GrammarSource>();
  schema->kind = sluice::GrammarSourceKind::JsonSchema;
  schema->name = "remembered.json";
  schema->text = kSchema;
  spec.sampling.grammar = schema;
  spec.remote.endpoints = {kRememberedEndpoint};
  spec.remote.model = "remembered-model";
  sluice::ui::AppSettings settings;
  settings.setLastSpec(spec);
  settings.setLastDataset(dataset);
}

QString writeInstructions(const QTemporaryDir& dir) {
  const QString path = dir.filePath("three.jsonl");
  QFile file(path);
  if (!file.open(QIODevice::WriteOnly)) qFatal("cannot write %s", qPrintable(path));
  file.write(
      "{\"instruction\": \"Tell a story.\"}\n{\"instruction\": \"The cat\"}\n"
      "{\"instruction\": \"Once upon a time\"}\n");
  return path;
}

}  // namespace

class ScriptedLaunchTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    // Settings of its own: another test program must not see (or change) this one's session.
    QCoreApplication::setApplicationName(QStringLiteral("sluice_gui_scripted_launch_test-%1")
                                             .arg(QCoreApplication::applicationPid()));
  }
  void init() { QSettings().clear(); }
  void cleanupTestCase() { QFile::remove(QSettings().fileName()); }

  // `sluice gui --model M --dataset D --job NEW --start` with a remote endpoint, n = 2,
  // temperature 0.9, 128 tokens and a schema remembered: the panels show the defaults, the run
  // goes to the local model and the job stores the defaults.
  void scriptedLaunchIgnoresTheLastSession() {
    QTemporaryDir dir;
    const QString input = writeInstructions(dir);
    rememberLastSession(input);
    const QString model = shared("models/stories260K/gguf/stories260K-f32.gguf");
    const QString job = dir.filePath("new.sluicejob");
    MainWindow window;
    QSignalSpy finished(&window, &MainWindow::runFinished);
    QVERIFY(sluice::ui::applyGuiOptions(
        {"sluice", "--model", model, "--dataset", input, "--job", job, "--start"}, window));
    sluice::ui::ParametersPanel* parameters = window.parametersPanel();
    QVERIFY(!parameters->isRemote());
    QCOMPARE(parameters->samplingParams().n, 1);
    QCOMPARE(parameters->samplingParams().temperature, 0.0f);
    QCOMPARE(parameters->samplingParams().max_tokens, 256);
    QCOMPARE(parameters->structuredOutput()->mode(), Mode::FreeText);
    QCOMPARE(parameters->restoredNote(), QString());
    QVERIFY(!window.setupSteps()->stepState(kParametersStep).contains("restored"));

    window.show();
    QVERIFY(finished.wait(120000));
    QCOMPARE(finished.first().at(1).toString(), QString());  // no remote endpoint to fail on
    QCOMPARE(window.currentJobPath(), job);
    const sluice::GenerationSpec ran =
        sluice::spec_from_json(sluice::JobStore::open(job.toStdString())->info().params);
    QCOMPARE(QString::fromStdString(ran.model_path), model);
    QVERIFY(!ran.remote.is_remote());
    QCOMPARE(ran.sampling.n, 1);
    QCOMPARE(ran.sampling.temperature, 0.0f);
    QCOMPARE(ran.sampling.max_tokens, 256);
    QVERIFY(!ran.sampling.grammar);
    QCOMPARE(sluice::JobStore::open(job.toStdString())->counts().finished(), 3);
  }

  // Any one option that says what to run makes a launch scripted: --json-schema alone, --choice
  // alone, --endpoint alone each start from the defaults for everything they do not name.
  void eachScriptingOptionStartsFromTheDefaults() {
    QTemporaryDir dir;
    rememberLastSession(writeInstructions(dir));
    {
      MainWindow window;
      QVERIFY(sluice::ui::applyGuiOptions({"sluice", "--choice", "yes", "--choice", "no"}, window));
      QCOMPARE(window.parametersPanel()->samplingParams().n, 1);
      QVERIFY(!window.parametersPanel()->isRemote());
      QCOMPARE(window.datasetPanel()->datasetPath(), QString());  // not reopened either
    }
    {
      MainWindow window;
      QVERIFY(sluice::ui::applyGuiOptions(
          {"sluice", "--endpoint", "http://127.0.0.1:8/v1", "--remote-model", "given"}, window));
      sluice::ui::ParametersPanel* parameters = window.parametersPanel();
      QVERIFY(parameters->isRemote());
      QCOMPARE(parameters->remoteServers()->remoteSpec().endpoints,
               std::vector<std::string>{"http://127.0.0.1:8/v1"});
      QCOMPARE(parameters->samplingParams().max_tokens, 256);
      QCOMPARE(parameters->structuredOutput()->mode(), Mode::FreeText);  // no schema given
    }
  }

  // `sluice gui` alone: the last session's parameters and instruction file come back, the
  // Parameters page and step say so, and "Use defaults" puts the defaults back.
  void interactiveLaunchRestoresAndSaysWhat() {
    QTemporaryDir dir;
    const QString input = writeInstructions(dir);
    rememberLastSession(input);
    MainWindow window;
    window.resize(1280, 720);
    QVERIFY(sluice::ui::applyGuiOptions({"sluice"}, window));
    window.show();
    sluice::ui::ParametersPanel* parameters = window.parametersPanel();
    QVERIFY(parameters->isRemote());
    QCOMPARE(parameters->remoteServers()->remoteSpec().endpoints,
             std::vector<std::string>{kRememberedEndpoint});
    QCOMPARE(parameters->samplingParams().n, 2);
    QCOMPARE(parameters->samplingParams().temperature, 0.9f);
    QCOMPARE(parameters->samplingParams().max_tokens, 128);
    QCOMPARE(parameters->structuredOutput()->mode(), Mode::JsonSchema);
    QCOMPARE(window.datasetPanel()->datasetPath(), input);
    QCOMPARE(parameters->restoredNote(),
             QString("Restored from your last session: n = 2, temperature 0.9, max tokens 128, "
                     "JSON Schema, remote servers http://127.0.0.1:9/v1 (model "
                     "remembered-model)."));
    const QString step = window.setupSteps()->stepState(kParametersStep);
    QVERIFY2(step.endsWith("\nrestored from last session"), qPrintable(step));
    QVERIFY2(step.contains("n = 2"), qPrintable(step));
    window.setupSteps()->setCurrentWidget(parameters);
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    // The picture once the page is laid out (its fields at their full height).
    QWidget* firstField = parameters->findChild<QAbstractSpinBox*>();
    QTRY_VERIFY(firstField->height() >= firstField->minimumSizeHint().height());
    QVERIFY(sluice::test::saveShot(window, "restored-session"));
    QVERIFY(sluice::ui::applyPaletteNamed("dark"));
    QTRY_COMPARE(parameters->useDefaultsButton()->palette().color(QPalette::Window),
                 sluice::ui::darkPalette().color(QPalette::Window));
    QVERIFY(sluice::test::saveShot(window, "restored-session-dark"));
    QVERIFY(sluice::ui::applyPaletteNamed("light"));

    QTest::mouseClick(parameters->useDefaultsButton(), Qt::LeftButton);
    QVERIFY(!parameters->isRemote());
    QCOMPARE(parameters->samplingParams().n, 1);
    QCOMPARE(parameters->samplingParams().max_tokens, 256);
    QCOMPARE(parameters->structuredOutput()->mode(), Mode::FreeText);
    QCOMPARE(parameters->restoredNote(), QString());
    QVERIFY(!window.setupSteps()->stepState(kParametersStep).contains("restored"));

    // Nothing to say when the last session used the defaults.
    QVERIFY(sluice::ui::describeChangedSettings(sluice::GenerationSpec{}).isEmpty());
    sluice::ui::AppSettings().setLastSpec(sluice::GenerationSpec{});
    MainWindow plain;
    QVERIFY(sluice::ui::applyGuiOptions({"sluice"}, plain));
    QCOMPARE(plain.parametersPanel()->restoredNote(), QString());
    QVERIFY(!plain.setupSteps()->stepState(kParametersStep).contains("restored"));
  }

  // Options that only adjust an interactive launch apply over the restored session: --device
  // wins over the remembered remote servers, the rest stays restored and is named.
  void deviceOptionWinsOverTheRestoredSession() {
    QTemporaryDir dir;
    rememberLastSession(writeInstructions(dir));
    MainWindow window;
    QVERIFY(sluice::ui::applyGuiOptions({"sluice", "--device", "cpu"}, window));
    QVERIFY(!window.parametersPanel()->isRemote());
    QCOMPARE(window.parametersPanel()->device(), std::string("cpu"));
    QCOMPARE(window.parametersPanel()->samplingParams().n, 2);
    // The note names what is still the last session's: not the servers.
    QCOMPARE(window.parametersPanel()->restoredNote(),
             QString("Restored from your last session: n = 2, temperature 0.9, max tokens 128, "
                     "JSON Schema."));
  }
};

QTEST_MAIN(ScriptedLaunchTest)
#include "scripted_launch_test.moc"
