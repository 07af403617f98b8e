// The app's "Remote server(s)" device, offscreen, against a real `sluice serve` on stories260K:
// with no model loaded, an instruction file and the server's URL, Start runs the job there and
// the table holds every row with the outputs of a local `sluice generate` (greedy); the job
// reopens with its remote settings; a bad URL disables Start with its reason; Check reports a
// live endpoint's model and a dead one's error while the event loop keeps running.
#include <qcustomplot.h>

#include <QComboBox>
#include <QElapsedTimer>
#include <QFile>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>
#include <map>
#include <vector>

#include "engine/jobs/job_table.h"
#include "tests/gui/results_model_reads.h"
#include "tests/integration/cli_test_util.h"
#include "tests/integration/serve_process.h"
#include "ui/live/kv_block_map_widget.h"
#include "ui/live/live_plots.h"
#include "ui/live/run_controls.h"
#include "ui/results/results_model.h"
#include "ui/results/results_panel.h"
#include "ui/setup/model_panel.h"
#include "ui/setup/parameters_panel.h"
#include "ui/setup/remote_servers_panel.h"
#include "ui/window/main_window.h"

using sluice::ui::MainWindow;
using sluice::ui::RemoteServersPanel;

namespace {

constexpr int kNumRows = 12;
constexpr int kMaxTokens = 32;

// Writes kNumRows instructions as input.jsonl in dir; returns its path.
QString writeRows(const QTemporaryDir& dir) {
  const QString path = dir.filePath("input.jsonl");
  QFile file(path);
  if (!file.open(QIODevice::WriteOnly)) qFatal("cannot write %s", qPrintable(path));
  for (int i = 0; i < kNumRows; ++i) {
    const nlohmann::json row = {
        {"id", "row-" + std::to_string(i)},
        {"instruction", "Tell a story about a cat called " + std::to_string(i)}};
    file.write(QByteArray::fromStdString(row.dump() + "\n"));
  }
  return path;
}

// Greedy sampling with kMaxTokens, in the parameters panel.
void setGreedy(MainWindow& window) {
  sluice::GenerationSpec spec;
  spec.sampling.max_tokens = kMaxTokens;
  spec.sampling.temperature = 0.0f;
  window.parametersPanel()->setFromSpec(spec);
}

// Chooses "Remote server(s)…" with the device selector, as a person would, and types urls.
void chooseRemote(MainWindow& window, const QString& urls) {
  QComboBox* device = window.parametersPanel()->deviceSelector();
  const int index = device->findText("Remote server(s)…");
  QVERIFY(index >= 0);
  device->setCurrentIndex(index);
  window.parametersPanel()->remoteServers()->endpointsEditor()->setPlainText(urls);
}

// The outputs of `sluice generate --model` on the same rows, by id.
std::map<std::string, std::string> localOutputs(const QString& input, const QTemporaryDir& dir) {
  const std::string output = dir.filePath("local.jsonl").toStdString();
  const auto run = sluice::test::run_sluice(
      {"generate", "--model",
       sluice::test::shared_path("models/stories260K/gguf/stories260K-f32.gguf"), "--input",
       input.toStdString(), "--output", output, "--max-tokens", std::to_string(kMaxTokens),
       "--temperature", "0", "--quiet"});
  if (run.exit_code != 0) qFatal("sluice generate failed: %s", run.err.c_str());
  std::map<std::string, std::string> out;
  for (const auto& row : sluice::test::read_jsonl(output))
    out[row["id"].get<std::string>()] = row.value("output", "");
  return out;
}

}  // namespace

class RemoteServersTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    m_server = std::make_unique<sluice::test::ServeProcess>();
    m_url = QString::fromStdString(m_server->url());
  }
  void cleanupTestCase() { m_server.reset(); }

  void remoteRunNeedsNoModelAndEqualsLocalRun();
  void invalidUrlDisablesStartWithReason();
  void checkReportsEndpointsWithoutFreezing();

 private:
  std::unique_ptr<sluice::test::ServeProcess> m_server;
  QString m_url;
};

void RemoteServersTest::remoteRunNeedsNoModelAndEqualsLocalRun() {
  QTemporaryDir dir;
  const QString input = writeRows(dir);
  QString jobPath;
  {
    MainWindow window;
    window.setJobsDirectory(dir.filePath("jobs"));
    setGreedy(window);
    window.preloadDataset(input);
    chooseRemote(window, m_url);
    QVERIFY(!window.isModelLoaded());
    QTRY_VERIFY_WITH_TIMEOUT(window.runControls()->startButton()->isEnabled(), 30000);
    QCOMPARE(window.modelPanel()->remoteText(),
             QString("Remote: the servers' model on 1 endpoint"));

    QSignalSpy finished(&window, &MainWindow::runFinished);
    QTest::mouseClick(window.runControls()->startButton(), Qt::LeftButton);
    QVERIFY(finished.wait(120000));
    QCOMPARE(finished.front().at(0).toBool(), false);        // not cancelled
    QCOMPARE(finished.front().at(1).toString(), QString());  // no error
    QVERIFY(!window.isModelLoaded());                        // nothing loaded here
    QVERIFY2(window.modelPanel()->remoteText().contains("model stories"),
             qPrintable(window.modelPanel()->remoteText()));

    // The servers' KV cache and memory are not seen from here: the plots say so and draw no
    // line of zeros; the answers' rate is plotted.
    using sluice::ui::LivePlots;
    auto* plots = window.findChild<LivePlots*>();
    QVERIFY(plots);
    QCOMPARE(plots->notice(LivePlots::Panel::KvBlocks),
             QString("KV cache: on the servers, not reported"));
    QCOMPARE(plots->notice(LivePlots::Panel::Memory),
             QString("Memory: on the servers, not reported"));
    QCustomPlot* kv = plots->plot(LivePlots::Panel::KvBlocks);
    for (int g = 0; g < kv->graphCount(); ++g) QCOMPARE(kv->graph(g)->dataCount(), 0);
    QVERIFY(plots->plot(LivePlots::Panel::Throughput)->graph(1)->dataCount() > 0);
    QCOMPARE(window.findChild<sluice::ui::KvBlockMapWidget*>()->emptyText(),
             QString("KV cache: on the servers, not reported"));

    // The table holds every row, with the local run's outputs.
    sluice::ui::ResultsModel* model = window.resultsPanel()->model();
    QTRY_COMPARE_WITH_TIMEOUT(model->rowCount(), kNumRows, 10000);
    const std::map<std::string, std::string> local = localOutputs(input, dir);
    QCOMPARE(static_cast<int>(local.size()), kNumRows);
    for (int r = 0; r < kNumRows; ++r) {
      const std::string id =
          sluice::gui_test::cellText(*model, r, sluice::ui::ResultsModel::IdColumn).toStdString();
      QCOMPARE(sluice::gui_test::cellText(*model, r, sluice::ui::ResultsModel::StatusColumn),
               QString("done"));
      QVERIFY2(local.count(id) == 1, id.c_str());
    }
    jobPath = window.currentJobPath();
    const auto table = sluice::JobTable::open(jobPath.toStdString());
    for (int r = 0; r < kNumRows; ++r) {
      const std::optional<sluice::RowResult> row = table->row(r);
      QVERIFY(row && !row->samples.empty());
      const std::string id = row->input["id"].get<std::string>();
      QCOMPARE(QString::fromStdString(row->samples.front().output),
               QString::fromStdString(local.at(id)));
    }
  }
  // Reopened, the job shows its remote settings again.
  MainWindow reopened;
  reopened.openJob(jobPath);
  QVERIFY(reopened.parametersPanel()->isRemote());
  const sluice::RemoteSpec remote = reopened.parametersPanel()->remoteServers()->remoteSpec();
  QCOMPARE(remote.endpoints, std::vector<std::string>{m_url.toStdString()});
  QVERIFY(reopened.runControls()->startButton()->isEnabled());
}

void RemoteServersTest::invalidUrlDisablesStartWithReason() {
  QTemporaryDir dir;
  MainWindow window;
  window.setJobsDirectory(dir.filePath("jobs"));
  window.preloadDataset(writeRows(dir));
  chooseRemote(window, m_url);
  QTRY_VERIFY_WITH_TIMEOUT(window.runControls()->startButton()->isEnabled(), 30000);

  window.parametersPanel()->remoteServers()->endpointsEditor()->setPlainText(
      m_url + "\nhtp://gpu2:8000/v1");
  QVERIFY(!window.runControls()->startButton()->isEnabled());
  const QString reason = window.parametersPanel()->validationError();
  QVERIFY2(reason.contains("line 2") && reason.contains("htp://gpu2:8000/v1") &&
               reason.contains("http://"),
           qPrintable(reason));
  bool statusNamesIt = false;
  for (const QLabel* label : window.statusBar()->findChildren<QLabel*>())
    statusNamesIt = statusNamesIt || label->text().contains(reason);
  QVERIFY2(statusNamesIt, "the status bar says why Start waits");

  window.parametersPanel()->remoteServers()->endpointsEditor()->setPlainText(QString());
  QVERIFY(!window.runControls()->startButton()->isEnabled());
  QVERIFY(window.parametersPanel()->validationError().contains("at least one endpoint"));
  // Back to a local device: no model, so Start waits for one.
  window.parametersPanel()->setDevice("cpu");
  QVERIFY(!window.parametersPanel()->isRemote());
  QVERIFY(!window.runControls()->startButton()->isEnabled());
}

void RemoteServersTest::checkReportsEndpointsWithoutFreezing() {
  RemoteServersPanel panel;
  // A server that takes connections and never answers: the check must wait on it without
  // holding up the event loop.
  QTcpServer silent;
  QVERIFY(silent.listen(QHostAddress::LocalHost));
  std::vector<QTcpSocket*> held;
  connect(&silent, &QTcpServer::newConnection, &silent,
          [&] { held.push_back(silent.nextPendingConnection()); });
  const int deadPort = sluice::test::free_port();
  const QString dead = QString("http://127.0.0.1:%1/v1").arg(deadPort);
  const QString hanging = QString("http://127.0.0.1:%1/v1").arg(silent.serverPort());
  panel.setCheckTimeoutMs(2000);
  panel.endpointsEditor()->setPlainText(m_url + "\n" + dead + "\n" + hanging);

  QSignalSpy done(&panel, &RemoteServersPanel::checkFinished);
  int ticks = 0;
  QTimer ticker;
  connect(&ticker, &QTimer::timeout, [&] { ++ticks; });
  ticker.start(20);
  QElapsedTimer clock;
  clock.start();
  QTest::mouseClick(panel.checkButton(), Qt::LeftButton);
  QVERIFY(clock.elapsed() < 500);  // Check returns at once
  QVERIFY(panel.isChecking());
  QVERIFY(!panel.checkButton()->isEnabled());
  QVERIFY(done.wait(15000));
  QVERIFY2(ticks >= 20,
           qPrintable(QString("the event loop ran %1 times while checking").arg(ticks)));

  const QStringList lines = panel.checkText().split('\n');
  QCOMPARE(lines.size(), 3);
  QCOMPARE(lines[0], QString("✓ %1: serves stories").arg(m_url));
  QCOMPARE(lines[1], QString("✗ %1: connection refused").arg(dead));
  QVERIFY2(lines[2].startsWith(QString("✗ %1: ").arg(hanging)), qPrintable(lines[2]));
  QVERIFY(panel.checkButton()->isEnabled());
  // The one model served is offered and chosen.
  QCOMPARE(panel.modelSelector()->currentText(), QString("stories"));
  QCOMPARE(panel.remoteSpec().model, std::string("stories"));
}

QTEST_MAIN(RemoteServersTest)
#include "remote_servers_test.moc"
