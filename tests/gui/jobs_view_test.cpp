// Jobs that are easy to find again: new jobs are named after their instruction file and model in
// the jobs folder; the Jobs tab lists them (its model under QAbstractItemModelTester) with their
// state, opens, resumes and deletes them; opening a job restores the setup panels from its spec;
// the status counts are the job file's, earlier runs included; a relaunch reopens the last files
// that still exist.
#include <QAbstractItemModelTester>
#include <QApplication>
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QLocale>
#include <QMessageBox>
#include <QProcess>
#include <QPushButton>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTest>

#include <unistd.h>

#include "engine/jobs/job_lock.h"
#include "engine/jobs/job_store.h"
#include "tests/gui/gui_shots.h"
#include "tests/support/test_paths.h"
#include "ui/jobs/job_naming.h"
#include "ui/jobs/jobs_model.h"
#include "ui/jobs/jobs_view.h"
#include "ui/live/run_controls.h"
#include "ui/setup/dataset_panel.h"
#include "ui/setup/parameters_panel.h"
#include "ui/window/app_palette.h"
#include "ui/window/app_settings.h"
#include "ui/window/main_window.h"

using sluice::ui::JobsModel;
using sluice::ui::MainWindow;

namespace {

QString shared(const char* relative) {
  return QString::fromStdString(sluice::test::shared_path(relative));
}

const char* kModel = "models/stories260K/gguf/stories260K-f32.gguf";

// Loads the model and the dataset and sets max_tokens; returns once the model is ready.
void prepare(MainWindow& window, const QString& dataset, int max_tokens) {
  QSignalSpy ready(&window, &MainWindow::modelReady);
  window.preloadModel(shared(kModel));
  QVERIFY(ready.wait(60000));
  window.preloadDataset(dataset);
  sluice::GenerationSpec spec;
  spec.sampling.max_tokens = max_tokens;
  spec.engine.max_num_seqs = 16;
  window.parametersPanel()->setFromSpec(spec);
}

// Writes a job file holding num_done done rows of a source of total_rows rows (-1: unknown);
// model_path as the job stores it (a remote job's: "<model> at <endpoint>"), spec's by default.
void writeJob(const QString& path, const sluice::GenerationSpec& spec, int num_done,
              int64_t total_rows, const std::string& model_path = {}) {
  sluice::JobInfo info;
  info.source_path = spec.input_path;
  info.model_path = model_path.empty() ? spec.model_path : model_path;
  info.params = sluice::spec_to_json(spec);
  auto store = sluice::JobStore::create(path.toStdString(), info);
  for (int i = 0; i < num_done; ++i) {
    sluice::RowResult row;
    row.row_index = i;
    row.samples.push_back({.output = "out", .output_tokens = 1, .finish_reason = "stop"});
    store->add_result(row);
  }
  if (total_rows >= 0) store->set_total_rows(total_rows);
  store->flush();
}

QString statusText(MainWindow& window) {
  QStringList texts;
  for (const QLabel* label : window.statusBar()->findChildren<QLabel*>()) texts << label->text();
  return texts.join(" | ");
}

}  // namespace

class JobsViewTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

  void namesJobsAfterInstructionsAndModel() {
    QTemporaryDir dir;
    const QDateTime when(QDate(2026, 11, 26), QTime(15, 4));
    const QString first = sluice::ui::newJobPath(dir.path(), "/data/alpaca 5k (v2).jsonl",
                                                 "/models/stories260K/", when);
    QCOMPARE(QFileInfo(first).fileName(),
             QString("alpaca-5k-v2__stories260K__2026-11-26_1504.sluicejob"));
    QCOMPARE(QFileInfo(first).absolutePath(), QDir(dir.path()).absolutePath());
    QFile(first).open(QIODevice::WriteOnly);
    const QString second = sluice::ui::newJobPath(dir.path(), "/data/alpaca 5k (v2).jsonl",
                                                  "/models/stories260K/", when);
    QCOMPARE(QFileInfo(second).fileName(),
             QString("alpaca-5k-v2__stories260K__2026-11-26_1504-2.sluicejob"));
    // Nothing unsafe reaches the name: no separators, dots at the ends, or control characters.
    QCOMPARE(sluice::ui::safeFileNamePart("../..\\évil\n:name.", 48, "x"), QString("vil-name"));
    QCOMPARE(sluice::ui::safeFileNamePart("///", 48, "instructions"), QString("instructions"));
    QCOMPARE(sluice::ui::safeFileNamePart(QString(100, 'a'), 48, "x").size(), 48);
    QVERIFY(sluice::ui::jobsDirectory().endsWith("/Sluice Jobs"));
  }

  void aRunIsSavedUnderItsNamesAndListed() {
    QTemporaryDir jobs;
    MainWindow window;
    window.setJobsDirectory(jobs.path());
    window.show();
    prepare(window, shared("datasets/en/self_instruct_seed_tasks.jsonl"), 4);
    QSignalSpy finished(&window, &MainWindow::runFinished);
    QTRY_VERIFY_WITH_TIMEOUT(window.runControls()->startButton()->isEnabled(), 30000);
    QTest::mouseClick(window.runControls()->startButton(), Qt::LeftButton);
    QVERIFY(finished.wait(120000));
    const QFileInfo job(window.currentJobPath());
    QCOMPARE(job.absolutePath(), QDir(jobs.path()).absolutePath());
    QVERIFY2(job.fileName().startsWith("self_instruct_seed_tasks__stories260K-f32__"),
             qPrintable(job.fileName()));
    QVERIFY(job.fileName().endsWith(".sluicejob"));

    JobsModel* model = window.jobsView()->model();
    QTRY_COMPARE_WITH_TIMEOUT(model->rowCount(), 1, 10000);
    QTRY_COMPARE_WITH_TIMEOUT(model->data(model->index(0, JobsModel::StateColumn)).toString(),
                              QString("done"), 10000);
    QCOMPARE(model->data(model->index(0, JobsModel::RowsColumn)).toString(), QString("175 / 175"));
    QCOMPARE(model->data(model->index(0, JobsModel::ModelColumn)).toString(),
             QString("stories260K-f32.gguf"));
    QCOMPARE(model->data(model->index(0, JobsModel::InstructionsColumn)).toString(),
             QString("self_instruct_seed_tasks.jsonl"));
  }

  void jobsModelShowsEachJobsState() {
    QTemporaryDir dir;
    sluice::GenerationSpec spec;
    spec.input_path = "/data/a.jsonl";
    spec.model_path = "/models/m.gguf";
    writeJob(dir.filePath("complete.sluicejob"), spec, 3, 3);
    writeJob(dir.filePath("partial.sluicejob"), spec, 2, -1);
    {
      QFile broken(dir.filePath("broken.sluicejob"));
      QVERIFY(broken.open(QIODevice::WriteOnly));
      broken.write("not a job");
    }
    QTemporaryDir elsewhere;
    writeJob(elsewhere.filePath("other.sluicejob"), spec, 1, 5);

    JobsModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setJobs(JobsModel::listJobFiles(
        dir.path(), {elsewhere.filePath("other.sluicejob"), dir.filePath("complete.sluicejob"),
                     dir.filePath("gone.sluicejob")}));
    QCOMPARE(model.rowCount(), 4);  // each file once; a recent job that is gone is left out
    auto stateOf = [&](const QString& name) {
      const int row = model.rowOf(dir.filePath(name));
      return row < 0 ? QString() : model.data(model.index(row, JobsModel::StateColumn)).toString();
    };
    QCOMPARE(stateOf("complete.sluicejob"), QString("done"));
    QCOMPARE(stateOf("partial.sluicejob"), QString("cancelled"));
    QCOMPARE(stateOf("broken.sluicejob"), QString("failed"));
    const int partial = model.rowOf(dir.filePath("partial.sluicejob"));
    QCOMPARE(model.data(model.index(partial, JobsModel::RowsColumn)).toString(), QString("2 / ?"));

    sluice::JobCounts live;
    live.done = 40;
    live.failed = 2;
    model.setActiveJob(dir.filePath("partial.sluicejob"), JobsModel::JobState::Paused, live);
    QCOMPARE(stateOf("partial.sluicejob"), QString("paused"));
    QCOMPARE(model.data(model.index(partial, JobsModel::RowsColumn)).toString(), QString("42 / ?"));
    QCOMPARE(model.data(model.index(partial, JobsModel::FailedColumn)).toString(), QString("2"));
    model.setActiveJob(QString(), JobsModel::JobState::Running, {});
    QCOMPARE(stateOf("partial.sluicejob"), QString("cancelled"));
  }

  // Jobs over the same file and model tell themselves apart: n, temperature, max tokens, what the
  // outputs were constrained to, and a remote job's model by the name its servers gave.
  void jobsShowWhatTheyAskedFor() {
    QTemporaryDir dir;
    sluice::GenerationSpec plain;
    plain.input_path = "/data/a.jsonl";
    plain.model_path = "/models/m.gguf";
    writeJob(dir.filePath("plain.sluicejob"), plain, 1, 1);
    sluice::GenerationSpec pairs = plain;
    pairs.sampling.n = 2;
    pairs.sampling.temperature = 0.9f;
    pairs.sampling.max_tokens = 128;
    pairs.sampling.grammar = std::make_shared<const sluice::GrammarSource>(sluice::GrammarSource{
        sluice::GrammarSourceKind::JsonSchema, "person.json", R"({"type":"object"})", {}});
    writeJob(dir.filePath("pairs.sluicejob"), pairs, 1, 1);
    sluice::GenerationSpec choice = plain;
    choice.sampling.temperature = 0.7f;
    choice.sampling.max_tokens = 4;
    choice.sampling.grammar = std::make_shared<const sluice::GrammarSource>(
        sluice::GrammarSource{sluice::GrammarSourceKind::Choice, "--choice", "", {"yes", "no"}});
    writeJob(dir.filePath("choice.sluicejob"), choice, 1, 1);
    sluice::GenerationSpec grammar = plain;
    grammar.sampling.grammar = std::make_shared<const sluice::GrammarSource>(
        sluice::GrammarSource{sluice::GrammarSourceKind::Gbnf, "g.gbnf", "root ::= \"a\"", {}});
    writeJob(dir.filePath("grammar.sluicejob"), grammar, 1, 1);
    sluice::GenerationSpec perRow = plain;
    perRow.schema_column = "schema";
    writeJob(dir.filePath("per-row.sluicejob"), perRow, 1, 1);
    sluice::GenerationSpec remote = plain;
    remote.model_path = "";
    remote.sampling.max_tokens = 2048;
    remote.remote.endpoints = {"http://gpu1:8000/v1", "http://gpu2:8000/v1"};  // the servers' model
    writeJob(dir.filePath("remote.sluicejob"), remote, 1, 1,
             "Qwen/Qwen2.5-7B-Instruct at http://gpu1:8000/v1");

    sluice::ui::JobsView view;
    QAbstractItemModelTester tester(view.model(),
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
    view.setSources(dir.path(), {});
    QSignalSpy listed(&view, &sluice::ui::JobsView::listed);
    view.refresh();
    QVERIFY(listed.wait(10000));
    JobsModel* model = view.model();
    QCOMPARE(model->rowCount(), 6);
    const auto cell = [&](const char* name, int column) {
      const int row = model->rowOf(dir.filePath(name));
      return row < 0 ? QString("(not listed)") : model->index(row, column).data().toString();
    };
    const auto settings = [&](const char* name) {
      return QStringList{
          cell(name, JobsModel::SamplesColumn), cell(name, JobsModel::TemperatureColumn),
          cell(name, JobsModel::MaxTokensColumn), cell(name, JobsModel::OutputModeColumn)};
    };
    QCOMPARE(settings("plain.sluicejob"), QStringList({"1", "0", "256", "free text"}));
    QCOMPARE(settings("pairs.sluicejob"), QStringList({"2", "0.9", "128", "JSON schema"}));
    QCOMPARE(settings("choice.sluicejob"), QStringList({"1", "0.7", "4", "choice"}));
    QCOMPARE(settings("grammar.sluicejob"), QStringList({"1", "0", "256", "grammar"}));
    QCOMPARE(settings("per-row.sluicejob"), QStringList({"1", "0", "256", "schema per row"}));
    QCOMPARE(settings("remote.sluicejob"),
             QStringList({"1", "0", QLocale().toString(2048), "free text"}));
    QCOMPARE(cell("plain.sluicejob", JobsModel::ModelColumn), QString("m.gguf"));
    // Not "v1", the end of the server's URL: the model the servers served, and where, on hover.
    QCOMPARE(cell("remote.sluicejob", JobsModel::ModelColumn), QString("Qwen/Qwen2.5-7B-Instruct"));
    const int remoteRow = model->rowOf(dir.filePath("remote.sluicejob"));
    QCOMPARE(model->index(remoteRow, JobsModel::ModelColumn).data(Qt::ToolTipRole).toString(),
             QString("Qwen/Qwen2.5-7B-Instruct on http://gpu1:8000/v1, http://gpu2:8000/v1"));

    view.resize(1280 - 40, 420);  // the Jobs tab in a 1280x720 window
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QVERIFY(sluice::test::saveShot(view, "jobs-settings"));
    QVERIFY(sluice::ui::applyPaletteNamed("dark"));
    QTRY_VERIFY(view.palette().color(QPalette::Window).lightness() < 128);  // delivered
    QVERIFY(sluice::test::saveShot(view, "jobs-settings-dark"));
    QVERIFY(sluice::ui::applyPaletteNamed("light"));
  }

  void deleteAsksFirstAndNeverTakesTheRunningJob() {
    QTemporaryDir dir;
    sluice::GenerationSpec spec;
    const QString path = dir.filePath("a.sluicejob");
    writeJob(path, spec, 1, 1);
    sluice::ui::JobsView view;
    view.setSources(dir.path(), {});
    QSignalSpy listed(&view, &sluice::ui::JobsView::listed);
    view.refresh();
    QVERIFY(listed.wait(10000));
    QCOMPARE(view.model()->rowCount(), 1);

    bool asked = false;
    view.setConfirmDelete([&](const QString&) { return asked = true, false; });
    QVERIFY(!view.deleteJob(path));  // declined
    QVERIFY(asked);
    QVERIFY(QFileInfo::exists(path));

    view.setConfirmDelete([](const QString&) { return true; });
    QFile(path + "-wal").open(QIODevice::WriteOnly);
    QVERIFY(view.deleteJob(path));
    QVERIFY(!QFileInfo::exists(path));
    QVERIFY(!QFileInfo::exists(path + "-wal"));
    QTRY_COMPARE_WITH_TIMEOUT(view.model()->rowCount(), 0, 10000);
  }

  // A job another process runs (its lock held) is not deleted; the lock file a killed run left
  // goes with the job.
  void deleteRefusesAJobInUseAndTakesAKilledRunsLockFile() {
    QTemporaryDir dir;
    sluice::GenerationSpec spec;
    const QString path = dir.filePath("held.sluicejob");
    writeJob(path, spec, 1, 1);
    sluice::ui::JobsView view;
    view.setSources(dir.path(), {});
    QSignalSpy listed(&view, &sluice::ui::JobsView::listed);
    view.refresh();
    QVERIFY(listed.wait(10000));
    view.setConfirmDelete([](const QString&) { return true; });
    {
      const auto lock = sluice::JobLock::acquire(path.toStdString());  // as a running generate
      QString refusal;
      QTimer closer;
      connect(&closer, &QTimer::timeout, [&] {
        if (auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget())) {
          refusal = box->text();
          box->close();
        }
      });
      closer.start(10);
      QVERIFY(!view.deleteJob(path));
      QVERIFY2(
          refusal.contains(QString("in use by process %1").arg(QCoreApplication::applicationPid())),
          qPrintable(refusal));
      QVERIFY(QFileInfo::exists(path));
    }
    // A run killed mid-job leaves its record: a process that has ended.
    QProcess ended;
    ended.start("/bin/true", {});
    QVERIFY(ended.waitForStarted());
    const qint64 endedPid = ended.processId();
    QVERIFY(ended.waitForFinished());
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    QFile record(path + ".lock");
    QVERIFY(record.open(QIODevice::WriteOnly));
    record.write(QString(R"({"pid": %1, "host": "%2", "since": "2026-11-29T00:00:00Z"})")
                     .arg(endedPid)
                     .arg(host)
                     .toUtf8());
    record.close();
    QVERIFY(view.deleteJob(path));
    QVERIFY(!QFileInfo::exists(path));
    QVERIFY(!QFileInfo::exists(path + ".lock"));
  }

  void openingAJobRestoresThePanels() {
    QTemporaryDir dir;
    sluice::GenerationSpec spec;
    spec.input_path = shared("datasets/en/self_instruct_seed_tasks.jsonl").toStdString();
    spec.model_path = shared(kModel).toStdString();
    spec.sampling.max_tokens = 77;
    spec.sampling.temperature = 0.25f;
    spec.prompt.system_prompt = "Answer in one line.";
    spec.prompt.column_template = "{instruction} (job template)";
    spec.on_bad_row = sluice::BadRowPolicy::Stop;
    const QString path = dir.filePath("job.sluicejob");
    writeJob(path, spec, 1, -1);

    MainWindow window;
    window.setJobsDirectory(dir.path());
    window.openJob(path);
    QCOMPARE(window.currentJobPath(), path);
    QCOMPARE(window.datasetPanel()->datasetPath(), QString::fromStdString(spec.input_path));
    QCOMPARE(window.parametersPanel()->samplingParams().max_tokens, 77);
    QCOMPARE(window.parametersPanel()->samplingParams().temperature, 0.25f);
    QCOMPARE(window.datasetPanel()->promptOptions().system_prompt,
             std::string("Answer in one line."));
    QCOMPARE(window.datasetPanel()->onBadRow(), sluice::BadRowPolicy::Stop);
    // The file's scan keeps a template the job set (it is not the file's default).
    QSignalSpy loaded(window.datasetPanel(), &sluice::ui::DatasetPanel::datasetLoaded);
    QVERIFY(loaded.wait(30000));
    QCOMPARE(window.datasetPanel()->promptOptions().column_template,
             std::string("{instruction} (job template)"));
    // A file that is not a job is refused and leaves the open job as it was.
    const QString broken = dir.filePath("broken.sluicejob");
    QFile file(broken);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write("not a job");
    file.close();
    window.openJob(broken);
    QCOMPARE(window.currentJobPath(), path);
  }

  // After a resume the status counts the job file's failed rows, earlier runs' included, as
  // `sluice jobs show` does (it said "0 failed" while the file held one).
  void statusCountsComeFromTheJobFile() {
    QTemporaryDir dir;
    const QString input = dir.filePath("input.jsonl");
    {
      QFile file(input);
      QVERIFY(file.open(QIODevice::WriteOnly));
      QString tooLong;
      for (int i = 0; i < 3000; ++i) tooLong += "story ";
      file.write("{\"prompt\": \"Once upon a time\"}\n");
      file.write(("{\"prompt\": \"" + tooLong + "\"}\n").toUtf8());  // past the 512-token context
      file.write("{\"prompt\": \"The cat\"}\n");
    }
    MainWindow window;
    window.setJobsDirectory(dir.path());
    prepare(window, input, 4);
    QSignalSpy finished(&window, &MainWindow::runFinished);
    window.start();
    QVERIFY(finished.wait(60000));
    const QString job = window.currentJobPath();
    QCOMPARE(sluice::JobStore::open(job.toStdString())->counts().failed, 1);
    QVERIFY2(statusText(window).contains("1 failed"), qPrintable(statusText(window)));

    window.openJob(job);  // a resume: every row is already in the file
    window.start();
    QVERIFY(finished.wait(60000));
    QVERIFY2(statusText(window).contains("Done: 3 rows (1 failed, 0 skipped)"),
             qPrintable(statusText(window)));
  }

  void relaunchReopensOnlyFilesThatStillExist() {
    QTemporaryDir dir;
    sluice::ui::AppSettings settings;
    settings.setLastModel(dir.filePath("gone.gguf"), QString());
    settings.setLastDataset(shared("datasets/en/self_instruct_seed_tasks.jsonl"));
    MainWindow window;
    window.restoreLastFiles();
    QCOMPARE(window.datasetPanel()->datasetPath(),
             shared("datasets/en/self_instruct_seed_tasks.jsonl"));
    QVERIFY(!window.isRunning());  // no load started for a model that is gone
    QVERIFY2(statusText(window).contains("gone.gguf"), qPrintable(statusText(window)));
    settings.setLastModel(QString(), QString());
    settings.setLastDataset(QString());
  }
};

QTEST_MAIN(JobsViewTest)
#include "jobs_view_test.moc"
