// The run's progress and controls without a model: rows finished of rows total, an ETA from the
// recent finish rate that is unknown until it can be known, pauses left out of the clock, the
// controls' stale text and readiness, and every panel setting reaching the job spec.
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QtTest>

#include <QStandardPaths>
#include <QTemporaryDir>

#include "app/generation_spec.h"
#include "app/job_progress.h"
#include "engine/jobs/job_store.h"
#include "ui/common/number_format.h"
#include "ui/live/run_controls.h"
#include "ui/live/run_progress.h"
#include "ui/live/run_status.h"
#include "ui/setup/dataset_panel.h"
#include "ui/setup/parameters_panel.h"
#include "ui/setup/run_spec.h"
#include "ui/window/main_window.h"

using sluice::ui::RunControls;
using sluice::ui::RunProgress;

class RunProgressTest : public QObject {
  Q_OBJECT

 private slots:
  void progressIsRowsFinishedOfRowsTotal() {
    RunProgress p;
    p.start(100.0);
    p.update(101.0, 0, 0, -1);
    QCOMPARE(p.fraction(), -1.0);  // total not known yet
    QCOMPARE(p.etaSeconds(), -1.0);
    p.update(102.0, 250, 0, 1000);
    QCOMPARE(p.rowsDone(), 250);
    QCOMPARE(p.rowsTotal(), 1000);
    QCOMPARE(p.fraction(), 0.25);
    p.update(103.0, 260, 0, -1);  // a later unknown total does not forget the known one
    QCOMPARE(p.rowsTotal(), 1000);
  }

  void etaIsUnknownUntilARateIsKnown() {
    RunProgress p;
    p.start(0.0);
    p.update(1.0, 0, 0, 1000);
    QCOMPARE(p.etaSeconds(), -1.0);  // nothing finished yet
    p.update(2.0, 10, 0, 1000);
    QCOMPARE(p.etaSeconds(), -1.0);  // too short a span to call it a rate
    p.update(10.0, 50, 0, 1000);     // 50 rows in 10 s: 5 rows/s, 950 left
    QCOMPARE(p.finishRate(), 5.0);
    QCOMPARE(p.etaSeconds(), 190.0);
    QCOMPARE(sluice::ui::formatDuration(-1.0), QString("—"));
    QCOMPARE(sluice::ui::formatDuration(190.0), QString("3:10"));
    QCOMPARE(sluice::ui::formatDuration(3725.0), QString("1:02:05"));
  }

  void etaFollowsTheRecentRateNotTheWholeRun() {
    RunProgress p;
    p.start(0.0);
    // 60 s at 10 rows/s, then 40 s at 1 row/s: the last 30 s say 1 row/s.
    qint64 rows = 0;
    for (int t = 1; t <= 60; ++t) p.update(t, rows += 10, 0, 10000);
    for (int t = 61; t <= 100; ++t) p.update(t, rows += 1, 0, 10000);
    QCOMPARE(p.finishRate(), 1.0);
    QCOMPARE(p.etaSeconds(), double(10000 - rows));
    // Rows in flight but none finishing for a whole window: no rate, no ETA (never "0:00").
    p.update(131.0, rows, 0, 10000);
    QCOMPARE(p.finishRate(), -1.0);
    QCOMPARE(p.etaSeconds(), -1.0);
  }

  void resumedRowsCountAsDoneNotAsRate() {
    RunProgress p;
    p.start(0.0);
    p.update(0.5, 0, 2400, 5000);  // a resumed job found 2,400 rows done
    QCOMPARE(p.rowsDone(), 2400);
    QCOMPARE(p.fraction(), 0.48);
    QCOMPARE(p.etaSeconds(), -1.0);
    p.update(10.0, 100, 2400, 5000);  // 100 rows in 10 s: 10 rows/s, 2,500 left
    QCOMPARE(p.etaSeconds(), 250.0);
  }

  void pausesAreLeftOutOfTheClockAndTheRate() {
    RunProgress p;
    p.start(0.0);
    p.update(10.0, 100, 0, 1000);
    p.setPaused(true, 10.0);
    p.setPaused(true, 20.0);  // a repeat changes nothing
    QCOMPARE(p.activeSeconds(500.0), 10.0);
    p.setPaused(false, 500.0);
    QCOMPARE(p.activeSeconds(505.0), 15.0);
    p.update(510.0, 200, 0, 1000);  // 200 rows in 20 active seconds
    QCOMPARE(p.finishRate(), 10.0);
    QCOMPARE(p.etaSeconds(), 80.0);
  }

  void controlsShowRowsOfTotal() {
    RunControls controls;
    controls.setReady(true);
    controls.setState(RunControls::State::Running);
    controls.setProgress(1200, -1);
    QVERIFY(controls.progressBar()->text().contains("counting"));
    controls.setProgress(1250, 5000);
    QCOMPARE(controls.progressBar()->value(), 250);
    QVERIFY2(controls.progressBar()->text().startsWith(sluice::ui::formatCount(1250) + " of " +
                                                       sluice::ui::formatCount(5000) + " rows"),
             qPrintable(controls.progressBar()->text()));
  }

  void controlsLeaveNoStaleText() {
    RunControls controls;
    controls.setState(RunControls::State::Loading);
    controls.setLoading(0.0, "stories260K-f32.gguf");
    controls.clearLoading();  // the load failed (or ended)
    QVERIFY2(!controls.progressBar()->text().contains("loading"),
             qPrintable(controls.progressBar()->text()));
    QCOMPARE(controls.statusText(), QString());
    controls.setState(RunControls::State::Running);
    controls.setState(RunControls::State::Cancelling);
    QCOMPARE(controls.statusText(), QString("cancelling…"));
    controls.setState(RunControls::State::Idle);
    QCOMPARE(controls.statusText(), QString());
  }

  // A job that finished (in an earlier session) opened again: the bar is full and says so, also
  // after a model loads behind it (a relaunch restores the last one).
  void aFinishedJobReopenedShowsAFullBar() {
    QStandardPaths::setTestModeEnabled(true);
    QTemporaryDir dir;
    const QString path = dir.filePath("finished.sluicejob");
    {
      sluice::JobInfo info;
      info.source_path = "/data/three.jsonl";
      info.source_format = "jsonl";
      info.total_rows = 3;
      info.params = sluice::spec_to_json(sluice::GenerationSpec{});
      auto store = sluice::JobStore::create(path.toStdString(), info);
      for (int64_t i = 0; i < 3; ++i) {
        sluice::RowResult row;
        row.row_index = i;
        row.line = static_cast<size_t>(i) + 1;
        row.status = sluice::RowStatus::Done;
        row.samples = {sluice::SampleResult{}};
        store->add_result(row);
      }
      store->flush();
    }
    sluice::ui::MainWindow window;
    window.openJob(path);
    QProgressBar* bar = window.runControls()->progressBar();
    QCOMPARE(bar->value(), bar->maximum());
    QVERIFY2(bar->text().startsWith("3 of 3 rows · 100%"), qPrintable(bar->text()));
    window.runControls()->setLoading(0.5, "a model");
    window.runControls()->clearLoading();
    QCOMPARE(bar->value(), bar->maximum());
    QVERIFY2(window.runControls()->progressText()->text().startsWith("3 of 3 rows"),
             qPrintable(window.runControls()->progressText()->text()));
  }

  // The status line counts the requests that run, not the rows the job admitted: a job admits
  // four times max_num_seqs rows (1,024 for 256), and the engine queues those it cannot run yet.
  void statusCountsRunningRequestsNotTheAdmissionWindow() {
    sluice::JobProgress progress;
    progress.rows_in_flight = 1024;
    progress.job.done = 1200;
    progress.job.failed = 3;
    progress.job.skipped = 1;
    sluice::StepStats stats;
    stats.num_running = 256;
    stats.num_waiting = 768;
    stats.max_num_seqs = 256;
    const QString text = sluice::ui::describeRunStatus(progress, stats);
    const QString expected =
        QString("%1 rows done (3 failed, 1 skipped) · 256 running · 768 queued")
            .arg(sluice::ui::formatCount(1204));
    QCOMPARE(text, expected);
    QVERIFY(!text.contains(sluice::ui::formatCount(1024)));
  }

  void startNeedsSomethingToRun() {
    RunControls controls;
    QVERIFY(!controls.startButton()->isEnabled());  // nothing loaded yet
    controls.setReady(true);
    QVERIFY(controls.startButton()->isEnabled());
    controls.setState(RunControls::State::Running);
    QVERIFY(!controls.startButton()->isEnabled());
    controls.setState(RunControls::State::Idle);
    QVERIFY(controls.startButton()->isEnabled());
    controls.setReady(false);
    QVERIFY(!controls.startButton()->isEnabled());
  }

  void everyPanelSettingReachesTheSpec() {
    sluice::ui::DatasetPanel dataset;
    sluice::ui::ParametersPanel parameters;
    sluice::GenerationSpec shown;
    shown.sampling.max_tokens = 77;
    shown.sampling.temperature = 0.35f;
    shown.sampling.top_p = 0.85f;
    shown.sampling.top_k = 17;
    shown.sampling.min_p = 0.05f;
    shown.sampling.repetition_penalty = 1.15f;
    shown.sampling.presence_penalty = 0.5f;
    shown.sampling.frequency_penalty = -0.25f;
    shown.sampling.n = 3;
    shown.sampling.seed = 1234;
    shown.sampling.stop = {"###", "\n\n"};
    shown.engine.max_num_seqs = 48;
    shown.num_threads = 3;
    parameters.setFromSpec(shown);
    sluice::PromptOptions prompt;
    prompt.column_template = "Q: {instruction}";
    prompt.system_prompt = "Be brief.";
    prompt.use_chat_template = false;
    dataset.setPromptOptions(prompt);
    for (const auto policy : {sluice::BadRowPolicy::Stop, sluice::BadRowPolicy::Skip}) {
      dataset.setOnBadRow(policy);
      const sluice::GenerationSpec spec =
          sluice::ui::specFromPanels("/m.gguf", "/t.model", dataset, parameters);
      QCOMPARE(spec.on_bad_row, policy);
      QCOMPARE(spec.model_path, std::string("/m.gguf"));
      QCOMPARE(spec.tokenizer_path, std::string("/t.model"));
      QCOMPARE(spec.num_threads, 3);
      QCOMPARE(spec.device, parameters.device());
      QCOMPARE(spec.prompt.column_template, prompt.column_template);
      QCOMPARE(spec.prompt.system_prompt, prompt.system_prompt);
      QCOMPARE(spec.prompt.use_chat_template, false);
      const auto& s = spec.sampling;
      QCOMPARE(s.max_tokens, 77);
      QCOMPARE(s.temperature, 0.35f);
      QCOMPARE(s.top_p, 0.85f);
      QCOMPARE(s.top_k, 17);
      QCOMPARE(s.min_p, 0.05f);
      QCOMPARE(s.repetition_penalty, 1.15f);
      QCOMPARE(s.presence_penalty, 0.5f);
      QCOMPARE(s.frequency_penalty, -0.25f);
      QCOMPARE(s.n, 3);
      QCOMPARE(s.seed, shown.sampling.seed);
      QCOMPARE(s.stop, shown.sampling.stop);
      QCOMPARE(spec.engine.max_num_seqs, 48);
    }
  }
};

QTEST_MAIN(RunProgressTest)
#include "run_progress_test.moc"
