// "Serve on port …": the app serves the loaded model over the OpenAI-compatible API from the
// engine its jobs use, on a thread of its own. While it serves and no job runs, the live plots
// show the served traffic; turning it off (or loading another model, or closing the window)
// closes the port; a port in use is reported by address and port and the toggle goes back off.
#include <qcustomplot.h>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTest>
#include <algorithm>
#include <memory>

#include "tests/support/test_paths.h"
#include "ui/live/live_plots.h"
#include "ui/live/run_controls.h"
#include "ui/results/results_panel.h"
#include "ui/serve/serve_panel.h"
#include "ui/setup/parameters_panel.h"
#include "ui/window/main_window.h"

using sluice::ui::LivePlots;
using sluice::ui::MainWindow;
using sluice::ui::ResultsPanel;
using sluice::ui::RunControls;
using sluice::ui::ServePanel;

namespace {

const char* kModel = "models/stories260K/gguf/stories260K-f32.gguf";
const char* kModelName = "stories260K-f32";

QString shared(const char* relative) {
  return QString::fromStdString(sluice::test::shared_path(relative));
}

struct HttpReply {
  int status = 0;
  QByteArray body;
  QString error;
};

// GET (body null) or POST a JSON body to the local server; waits up to timeoutMs.
HttpReply request(int port, const QString& path, const QByteArray& body = QByteArray(),
                  int timeoutMs = 60000) {
  QNetworkAccessManager manager;
  QNetworkRequest req(QUrl(QString("http://127.0.0.1:%1%2").arg(port).arg(path)));
  req.setHeader(QNetworkRequest::ContentTypeHeader, "application/json");
  std::unique_ptr<QNetworkReply> reply(body.isNull() ? manager.get(req) : manager.post(req, body));
  QSignalSpy finished(reply.get(), &QNetworkReply::finished);
  HttpReply result;
  if (!finished.wait(timeoutMs)) {
    result.error = QString("no answer within %1 ms").arg(timeoutMs);
    return result;
  }
  result.status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
  result.body = reply->readAll();
  if (reply->error() != QNetworkReply::NoError) result.error = reply->errorString();
  return result;
}

// True when nothing accepts connections on the port.
bool isRefused(int port) {
  QTcpSocket socket;
  socket.connectToHost("127.0.0.1", static_cast<quint16>(port));
  if (socket.waitForConnected(3000)) return false;
  return socket.error() == QAbstractSocket::ConnectionRefusedError;
}

// The most points any graph of one plot holds.
int pointsIn(LivePlots* plots, LivePlots::Panel panel) {
  int most = 0;
  QCustomPlot* plot = plots->plot(panel);
  for (int g = 0; g < plot->graphCount(); ++g) most = std::max(most, plot->graph(g)->dataCount());
  return most;
}

// The values of the graph named `name` in one plot.
QVector<double> valuesOf(LivePlots* plots, LivePlots::Panel panel, const QString& name) {
  QVector<double> values;
  QCustomPlot* plot = plots->plot(panel);
  for (int g = 0; g < plot->graphCount(); ++g) {
    if (plot->graph(g)->name() != name) continue;
    for (auto it = plot->graph(g)->data()->constBegin(); it != plot->graph(g)->data()->constEnd();
         ++it)
      values.append(it->value);
  }
  return values;
}

bool statusBarShows(MainWindow& window, const QString& text) {
  for (const QLabel* label : window.statusBar()->findChildren<QLabel*>())
    if (label->text() == text) return true;
  return false;
}

// A shown window, its jobs in a folder of their own.
struct ShownWindow {
  QTemporaryDir jobs;
  MainWindow window;
  ShownWindow() {
    window.setJobsDirectory(jobs.path());
    window.show();
  }
};

// Loads the test model; returns whether it loaded within a minute.
bool loadModel(MainWindow& window) {
  QSignalSpy ready(&window, &MainWindow::modelReady);
  window.preloadModel(shared(kModel));
  return ready.wait(60000);
}

// The value of a Prometheus counter in a /metrics body, or -1.
double metric(const QByteArray& body, const QByteArray& name) {
  for (const QByteArray& line : body.split('\n')) {
    if (line.startsWith(name + "{") || line.startsWith(name + " "))
      return line.mid(line.lastIndexOf(' ') + 1).toDouble();
  }
  return -1;
}

// Turns serving on at `port` and waits until it serves or has failed.
void toggleOn(ServePanel* panel, int port) {
  panel->portBox()->setValue(port);
  QVERIFY(panel->serveButton()->isEnabled());
  QTest::mouseClick(panel->serveButton(), Qt::LeftButton);
  QTRY_VERIFY_WITH_TIMEOUT(panel->isServing() || !panel->serveButton()->isChecked(), 60000);
}

}  // namespace

class ServeToggleTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

  void servesTheLoadedModelAndPlotsItsTraffic() {
    ShownWindow shown;
    MainWindow& window = shown.window;
    QVERIFY(loadModel(window));
    ServePanel* panel = window.servePanel();
    LivePlots* plots = window.findChild<LivePlots*>();
    QVERIFY(plots);
    QCOMPARE(plots->largestGraphSize(), 0);

    toggleOn(panel, 0);  // any free port
    QVERIFY2(panel->isServing(), qPrintable(panel->statusText()));
    const int port = panel->boundPort();
    QVERIFY(port > 0);
    const QString status =
        QString("Serving %1 on http://127.0.0.1:%2/v1").arg(kModelName).arg(port);
    QCOMPARE(panel->statusText(), status);
    QVERIFY2(statusBarShows(window, status), "the status bar does not say what is served");

    const HttpReply models = request(port, "/v1/models");
    QVERIFY2(models.status == 200, qPrintable(models.error + models.body));
    const QJsonArray data = QJsonDocument::fromJson(models.body).object()["data"].toArray();
    QCOMPARE(data.size(), 1);
    QCOMPARE(data[0].toObject()["id"].toString(), QString(kModelName));

    const QByteArray body = QJsonDocument(QJsonObject{{"model", kModelName},
                                                      {"prompt", "Once upon a time"},
                                                      {"max_tokens", 8},
                                                      {"temperature", 0}})
                                .toJson(QJsonDocument::Compact);
    const HttpReply completion = request(port, "/v1/completions", body);
    QVERIFY2(completion.status == 200, qPrintable(completion.error + completion.body));
    const QJsonObject answer = QJsonDocument::fromJson(completion.body).object();
    QVERIFY2(!answer["choices"].toArray()[0].toObject()["text"].toString().isEmpty(),
             completion.body.constData());
    QCOMPARE(answer["usage"].toObject()["completion_tokens"].toInt(), 8);

    // No job ran: the plots got the served request's steps from the engine service.
    QVERIFY(!window.isRunning());
    for (const auto plot : {LivePlots::Panel::Throughput, LivePlots::Panel::Batch,
                            LivePlots::Panel::KvBlocks, LivePlots::Panel::Memory}) {
      QTRY_VERIFY_WITH_TIMEOUT(pointsIn(plots, plot) > 0, 5000);
    }
    // The burst shows, and then its end: the rate drops to nothing instead of staying up.
    const auto rates = [&] { return valuesOf(plots, LivePlots::Panel::Throughput, "generated"); };
    QTRY_VERIFY_WITH_TIMEOUT(rates().size() > 1 && rates().last() == 0.0, 5000);
    const QVector<double> plotted = rates();
    QVERIFY(*std::max_element(plotted.begin(), plotted.end()) > 0.0);

    QTest::mouseClick(panel->serveButton(), Qt::LeftButton);  // off
    QTRY_VERIFY_WITH_TIMEOUT(!panel->isServing() && panel->statusText().contains("Stopped"), 30000);
    QVERIFY(!panel->serveButton()->isChecked());
    QVERIFY(!statusBarShows(window, status));
    QVERIFY2(isRefused(port), "the port still takes connections after serving was turned off");
  }

  // Turned on while a job runs (paused, so that it cannot end first), the server goes to the
  // job's engine: its requests batch with the job's rows (the engine's counters include both),
  // and it goes on serving once the job ends.
  void servesFromTheRunningJobsEngine() {
    ShownWindow shown;
    MainWindow& window = shown.window;
    QVERIFY(loadModel(window));
    window.preloadDataset(shared("datasets/en/self_instruct_seed_tasks.jsonl"));
    sluice::GenerationSpec spec;
    spec.sampling.max_tokens = 32;
    spec.engine.max_num_seqs = 16;
    window.parametersPanel()->setFromSpec(spec);
    QSignalSpy finished(&window, &MainWindow::runFinished);
    // Paused as soon as it runs (its rows already in the engine go on), so it cannot end first.
    connect(window.resultsPanel(), &ResultsPanel::jobPathChanged, &window,
            [&window] { window.setPaused(true); });
    QTRY_VERIFY_WITH_TIMEOUT(window.runControls()->startButton()->isEnabled(), 30000);
    QTest::mouseClick(window.runControls()->startButton(), Qt::LeftButton);
    QTRY_COMPARE_WITH_TIMEOUT(window.runControls()->state(), RunControls::State::Paused, 60000);

    ServePanel* panel = window.servePanel();
    toggleOn(panel, 0);
    QVERIFY2(panel->isServing(), qPrintable(panel->statusText()));
    const int port = panel->boundPort();
    const QByteArray body =
        QJsonDocument(
            QJsonObject{{"model", kModelName}, {"prompt", "Once upon a time"}, {"max_tokens", 8}})
            .toJson(QJsonDocument::Compact);
    // It waits for the job's rows ahead of it in the engine's queue (a sanitizer build is slow).
    const HttpReply completion = request(port, "/v1/completions", body, 300000);
    QVERIFY2(completion.status == 200, qPrintable(completion.error + completion.body));
    QVERIFY(window.isRunning());
    const HttpReply metrics = request(port, "/metrics");
    QCOMPARE(metrics.status, 200);
    const double numFinished = metric(metrics.body, "sluice:request_success_total");
    QVERIFY2(numFinished > 1, metrics.body.constData());  // the job's rows and this request

    window.cancel();
    QVERIFY(finished.wait(60000));
    QVERIFY(panel->isServing());
    QCOMPARE(request(port, "/v1/completions", body).status, 200);
  }

  // At 1280x720, serving to the network after a job ran: the status bar's texts (the run's
  // summary, tokens, time, what is served) each keep to a place of their own inside the bar,
  // what is served is shown whole, and the window stays as wide as the screen.
  void statusTextsDoNotOverlapWhileServing() {
    ShownWindow shown;
    MainWindow& window = shown.window;
    window.resize(1280, 720);
    QVERIFY(loadModel(window));
    window.preloadDataset(shared("datasets/en/self_instruct_seed_tasks.jsonl"));
    sluice::GenerationSpec spec;
    spec.sampling.max_tokens = 16;
    window.parametersPanel()->setFromSpec(spec);
    QTRY_VERIFY_WITH_TIMEOUT(window.runControls()->startButton()->isEnabled(), 30000);
    QSignalSpy finished(&window, &MainWindow::runFinished);
    QTest::mouseClick(window.runControls()->startButton(), Qt::LeftButton);
    QVERIFY(finished.wait(120000));
    ServePanel* panel = window.servePanel();
    panel->hostBox()->setCurrentIndex(1);  // all interfaces, no key: the longest status
    toggleOn(panel, 0);
    QVERIFY2(panel->isServing(), qPrintable(panel->statusText()));
    QCoreApplication::processEvents();

    QStatusBar* bar = window.statusBar();
    QList<QLabel*> labels;
    for (QLabel* label : bar->findChildren<QLabel*>())
      if (label->isVisible() && !label->text().isEmpty()) labels.append(label);
    QVERIFY2(labels.size() >= 4, qPrintable(QString::number(labels.size())));
    QVERIFY2(window.width() <= 1280, qPrintable(QString::number(window.width())));
    for (int i = 0; i < labels.size(); ++i) {
      const QRect rect = labels[i]->geometry();
      QVERIFY2(rect.left() >= 0 && rect.right() < bar->width(),
               qPrintable(QString("%1 at %2..%3 of %4")
                              .arg(labels[i]->text())
                              .arg(rect.left())
                              .arg(rect.right())
                              .arg(bar->width())));
      for (int j = 0; j < i; ++j)
        QVERIFY2(!rect.intersects(labels[j]->geometry()),
                 qPrintable(labels[i]->text() + " covers " + labels[j]->text()));
      if (labels[i]->text() == panel->statusText())
        QVERIFY(labels[i]->contentsRect().width() >=
                labels[i]->fontMetrics().horizontalAdvance(panel->statusText()));
    }
    QVERIFY(statusBarShows(window, panel->statusText()));
    QTest::mouseClick(panel->serveButton(), Qt::LeftButton);  // off
    QTRY_VERIFY_WITH_TIMEOUT(!panel->isServing(), 30000);
  }

  // Every interface without a key is open to anyone on the network: the panel says so before
  // the start and in its status line while serving (`sluice serve` would refuse it without
  // --allow-unauthenticated).
  void servingToTheNetworkWithoutAKeyIsWarnedOf() {
    ShownWindow shown;
    MainWindow& window = shown.window;
    QVERIFY(loadModel(window));
    ServePanel* panel = window.servePanel();
    QVERIFY(!panel->openNetworkWarning()->isVisibleTo(panel));
    panel->hostBox()->setCurrentIndex(1);  // all interfaces
    QVERIFY(panel->isOpenToTheNetwork());
    QVERIFY(panel->openNetworkWarning()->isVisibleTo(panel));
    panel->apiKeyEdit()->setText("secret");
    QVERIFY(!panel->openNetworkWarning()->isVisibleTo(panel));
    panel->apiKeyEdit()->clear();
    QVERIFY(panel->openNetworkWarning()->isVisibleTo(panel));

    toggleOn(panel, 0);
    QVERIFY2(panel->isServing(), qPrintable(panel->statusText()));
    QVERIFY2(panel->statusText().contains("to anyone on the network (no API key)"),
             qPrintable(panel->statusText()));
    QTest::mouseClick(panel->serveButton(), Qt::LeftButton);  // off
    QTRY_VERIFY_WITH_TIMEOUT(!panel->isServing(), 30000);
    panel->hostBox()->setCurrentIndex(0);
    QVERIFY(!panel->openNetworkWarning()->isVisibleTo(panel));
  }

  void aPortInUseIsReportedAndTheToggleGoesOff() {
    QTcpServer occupant;
    QVERIFY(occupant.listen(QHostAddress("127.0.0.1"), 0));
    const int busyPort = occupant.serverPort();
    ShownWindow shown;
    MainWindow& window = shown.window;
    QVERIFY(loadModel(window));
    ServePanel* panel = window.servePanel();

    toggleOn(panel, busyPort);
    QVERIFY(!panel->isServing());
    QVERIFY(!panel->serveButton()->isChecked());
    QVERIFY2(panel->statusText().contains(QString("127.0.0.1:%1").arg(busyPort)),
             qPrintable(panel->statusText()));
    QVERIFY2(panel->statusText().contains("in use"), qPrintable(panel->statusText()));
    QVERIFY(panel->portBox()->isEnabled());

    // Still usable: another port serves.
    toggleOn(panel, 0);
    QVERIFY2(panel->isServing(), qPrintable(panel->statusText()));
    QCOMPARE(request(panel->boundPort(), "/health").status, 200);
  }

  void loadingAnotherModelStopsServing() {
    ShownWindow shown;
    MainWindow& window = shown.window;
    QVERIFY(loadModel(window));
    ServePanel* panel = window.servePanel();
    toggleOn(panel, 0);
    QVERIFY(panel->isServing());
    const int port = panel->boundPort();

    QVERIFY(loadModel(window));
    QTRY_VERIFY_WITH_TIMEOUT(!panel->isServing(), 10000);
    QVERIFY2(panel->statusText().contains("another model"), qPrintable(panel->statusText()));
    QVERIFY(isRefused(port));
  }

  void closingTheWindowStopsServing() {
    auto shown = std::make_unique<ShownWindow>();
    QVERIFY(loadModel(shown->window));
    toggleOn(shown->window.servePanel(), 0);
    const int port = shown->window.servePanel()->boundPort();
    QVERIFY(port > 0);
    QCOMPARE(request(port, "/health").status, 200);
    shown->window.close();
    shown.reset();
    QVERIFY(isRefused(port));
  }
};

QTEST_MAIN(ServeToggleTest)
#include "serve_toggle_test.moc"
