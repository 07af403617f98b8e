// The main window fits the screen it opens on (issue 15: the 1280x800 default ran off a 1280x720
// screen).
#include <QGuiApplication>
#include <QScreen>
#include <QTest>

#include "ui/window/main_window.h"
#include "ui/window/window_fit.h"

using sluice::ui::fittedWindowRect;
using sluice::ui::fittedWindowSize;
using sluice::ui::MainWindow;

class WindowFitTest : public QObject {
  Q_OBJECT

 private slots:
  void sizesFitTheAvailableArea() {
    QCOMPARE(fittedWindowSize({1280, 800}, QRect(0, 0, 1920, 1040)), QSize(1280, 800));
    QCOMPARE(fittedWindowSize({1280, 800}, QRect(0, 0, 1280, 690)), QSize(1280, 690));
    QCOMPARE(fittedWindowSize({1280, 800}, QRect(0, 30, 1024, 738)), QSize(1024, 738));
    QCOMPARE(fittedWindowSize({1280, 800}, QRect()), QSize(1280, 800));  // no screen known
  }

  void rectsAreBroughtInside() {
    // A geometry saved on a big screen, restored on a laptop with a top panel.
    QCOMPARE(fittedWindowRect(QRect(1500, 900, 1280, 800), QRect(0, 30, 1280, 690)),
             QRect(0, 30, 1280, 690));
    QCOMPARE(fittedWindowRect(QRect(-50, 10, 600, 400), QRect(0, 30, 1280, 690)),
             QRect(0, 30, 600, 400));
    QCOMPARE(fittedWindowRect(QRect(100, 100, 600, 400), QRect(0, 0, 1280, 720)),
             QRect(100, 100, 600, 400));
  }

  void theMainWindowOpensInsideItsScreen() {
    MainWindow window;
    const QRect available = QGuiApplication::primaryScreen()->availableGeometry();
    QVERIFY2(window.width() <= available.width() && window.height() <= available.height(),
             qPrintable(QString("%1x%2 on %3x%4")
                            .arg(window.width())
                            .arg(window.height())
                            .arg(available.width())
                            .arg(available.height())));
  }
};

QTEST_MAIN(WindowFitTest)
#include "window_fit_test.moc"
