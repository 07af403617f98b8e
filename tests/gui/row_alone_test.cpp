// "Run this row alone" runs beside the job at once: with the job paused (or running) the row goes
// to the same engine service from a thread of its own, so its answer does not wait for the job to
// end; when it has to wait (the paused job's rows already in the engine run first) the status bar
// says why.
#include <QMessageBox>
#include <QPushButton>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTest>

#include "engine/jobs/job_table.h"
#include "tests/support/test_paths.h"
#include "ui/live/run_controls.h"
#include "ui/setup/parameters_panel.h"
#include "ui/window/main_window.h"

using sluice::ui::MainWindow;

namespace {

QString shared(const char* relative) {
  return QString::fromStdString(sluice::test::shared_path(relative));
}

// The first committed row of the job, or -1.
int64_t firstCommittedRow(const QString& job) {
  try {
    const auto rows = sluice::JobTable::open(job.toStdString())->row_indices_from(0);
    return rows.empty() ? -1 : rows.front();
  } catch (const std::exception&) {
    return -1;
  }
}

}  // namespace

class RowAloneTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

  void answersWhileTheJobIsPaused() {
    QTemporaryDir jobs;
    MainWindow window;
    window.setJobsDirectory(jobs.path());
    window.show();
    QSignalSpy ready(&window, &MainWindow::modelReady);
    window.preloadModel(shared("models/stories260K/gguf/stories260K-f32.gguf"));
    QVERIFY(ready.wait(60000));
    window.preloadDataset(shared("datasets/en/alpaca_5000.json"));
    sluice::GenerationSpec spec;
    spec.sampling.max_tokens = 32;
    spec.engine.max_num_seqs = 64;
    window.parametersPanel()->setFromSpec(spec);

    QSignalSpy finished(&window, &MainWindow::runFinished);
    QTRY_VERIFY_WITH_TIMEOUT(window.runControls()->startButton()->isEnabled(), 30000);
    QTest::mouseClick(window.runControls()->startButton(), Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(firstCommittedRow(window.currentJobPath()) >= 0, 60000);
    QTest::mouseClick(window.runControls()->pauseButton(), Qt::LeftButton);
    QCOMPARE(window.runControls()->state(), sluice::ui::RunControls::State::Paused);

    QStringList messages;
    connect(window.statusBar(), &QStatusBar::messageChanged,
            [&](const QString& message) { messages << message; });
    QSignalSpy done(&window, &MainWindow::rowAloneDone);
    const int64_t row = firstCommittedRow(window.currentJobPath());
    emit window.rowAloneRequested(0, row);
    QVERIFY2(done.wait(120000), "run this row alone waited for the paused job");
    QCOMPARE(done.first().at(0).toLongLong(), row);
    QVERIFY2(done.first().at(1).toBool(), qPrintable(done.first().at(2).toString()));
    QCOMPARE(window.runControls()->state(), sluice::ui::RunControls::State::Paused);
    QVERIFY(finished.isEmpty());
    // The job's rows still in the engine ran first: the status bar said so while it waited.
    QVERIFY2(messages.join('\n').contains("ahead of it"), qPrintable(messages.join('\n')));

    QTest::mouseClick(window.runControls()->cancelButton(), Qt::LeftButton);
    QMessageBox* box = nullptr;  // Cancel asks first
    QTRY_VERIFY_WITH_TIMEOUT(
        (box = window.findChild<QMessageBox*>("confirmCancel")) != nullptr && box->isVisible(),
        5000);
    QTest::mouseClick(box->button(QMessageBox::Yes), Qt::LeftButton);
    QVERIFY(finished.wait(60000));
  }
};

QTEST_MAIN(RowAloneTest)
#include "row_alone_test.moc"
