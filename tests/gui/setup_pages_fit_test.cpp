// Every setup page fits its column at 1280x720 (issue 33, "readable everywhere": the Instructions
// and Parameters pages ran off the column's right edge, their buttons and labels cut off, and
// the column has no horizontal scroll bar to reach them).
#include <QApplication>
#include <QFontMetrics>
#include <QPushButton>
#include <QScrollArea>
#include <QSignalSpy>
#include <QStackedWidget>
#include <QStandardPaths>
#include <QTest>

#include "tests/gui/gui_shots.h"
#include "tests/support/test_paths.h"
#include "ui/setup/dataset_panel.h"
#include "ui/setup/parameters_panel.h"
#include "ui/setup/setup_steps.h"
#include "ui/setup/structured_output_panel.h"
#include "ui/window/main_window.h"

using sluice::ui::MainWindow;
using sluice::ui::ParametersPanel;

namespace {

QString sharedFile(const char* relative) {
  return QString::fromStdString(sluice::test::shared_path(relative));
}

// Fails when the page shown in steps is wider than its scroll area's viewport (the column has no
// horizontal scroll bar, so the overflow is simply cut off); saves a picture named shot.
void checkCurrentPageFits(MainWindow& window, const QString& shot) {
  QApplication::processEvents();
  sluice::ui::SetupSteps* steps = window.setupSteps();
  // Each page sits in a scroll area of its own, the stack's current page.
  auto* area = qobject_cast<QScrollArea*>(steps->findChild<QStackedWidget*>()->currentWidget());
  QVERIFY(area != nullptr);
  QVERIFY(sluice::test::saveShot(window, shot));
  const int content = area->widget()->width();
  const int viewport = area->viewport()->width();
  // The steps above the page: every line of a step's text within its button (a long state,
  // such as why the parameters are not valid yet, ran past the column's edge).
  for (int index = 0; index < steps->count(); ++index) {
    const QPushButton* button = steps->stepButton(index);
    const QFontMetrics metrics(button->font());
    for (const QString& line : button->text().split('\n')) {
      QVERIFY2(metrics.horizontalAdvance(line) <= button->contentsRect().width(),
               qPrintable(QString("%1: step %2's line '%3' is %4 px in a %5 px button")
                              .arg(shot)
                              .arg(index)
                              .arg(line)
                              .arg(metrics.horizontalAdvance(line))
                              .arg(button->contentsRect().width())));
    }
  }
  QVERIFY2(content <= viewport, qPrintable(QString("%1: the page is %2 px wide in a %3 px column")
                                               .arg(shot)
                                               .arg(content)
                                               .arg(viewport)));
}

}  // namespace

class SetupPagesFitTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

  void everyPageFitsItsColumnAt1280x720() {
    MainWindow window;
    window.resize(1280, 720);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QSignalSpy ready(&window, &MainWindow::modelReady);
    window.preloadModel(sharedFile("models/stories260K/gguf/stories260K-f32.gguf"));
    QVERIFY(ready.wait(60000));
    QSignalSpy loaded(window.datasetPanel(), &sluice::ui::DatasetPanel::datasetLoaded);
    window.datasetPanel()->setDatasetPath(sharedFile("datasets/en/alpaca_5000.json"));
    QVERIFY(loaded.wait(30000));
    sluice::ui::SetupSteps* steps = window.setupSteps();
    for (int index = 0; index < steps->count(); ++index) {
      steps->setCurrentIndex(index);
      checkCurrentPageFits(window, QString("setup-page-%1").arg(index));
      if (QTest::currentTestFailed()) return;
    }
    // The Parameters page in each structured-output mode, and with remote servers.
    ParametersPanel* parameters = window.parametersPanel();
    steps->setCurrentWidget(parameters);
    using Mode = sluice::ui::StructuredOutputPanel::Mode;
    for (Mode mode : {Mode::JsonSchema, Mode::JsonObject, Mode::Regex, Mode::Choice, Mode::Gbnf,
                      Mode::SchemaColumn}) {
      parameters->structuredOutput()->setMode(mode);
      checkCurrentPageFits(window, QString("setup-parameters-mode-%1").arg(static_cast<int>(mode)));
      if (QTest::currentTestFailed()) return;
    }
    parameters->setRemote(true);
    checkCurrentPageFits(window, "setup-parameters-remote");
  }
};

QTEST_MAIN(SetupPagesFitTest)
#include "setup_pages_fit_test.moc"
