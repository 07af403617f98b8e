// Issue 15, point 11 (look and feel): the setup as numbered steps that are always visible, no
// label on the window's edge, a toolbar and a View menu on the menus' own actions, plots that
// follow a dark palette, one number format ("1,278,183 tokens"), and progress text beside the
// bar instead of over its fill. Runs under the C locale (set below), whose grouping separator
// is ",", so the expected strings are fixed.
#include <qcustomplot.h>

#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QHash>
#include <QLabel>
#include <QMenu>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QStyle>
#include <QTabWidget>
#include <QTest>
#include <QToolBar>
#include <cmath>
#include <functional>
#include <tuple>
#include <utility>

#include "tests/gui/gui_shots.h"
#include "tests/support/test_paths.h"
#include "ui/common/length_histogram.h"
#include "ui/common/number_format.h"
#include "ui/live/live_plots.h"
#include "ui/live/run_controls.h"
#include "ui/live/run_summary.h"
#include "ui/setup/dataset_panel.h"
#include "ui/setup/parameters_panel.h"
#include "ui/setup/reasoning_panel.h"
#include "ui/setup/setup_steps.h"
#include "ui/window/app_palette.h"
#include "ui/window/main_window.h"

using sluice::ui::MainWindow;
using sluice::ui::SetupSteps;

namespace {

QAction* actionNamed(const QList<QAction*>& actions, const QString& text) {
  for (QAction* action : actions) {
    if (action->text().remove('&') == text) return action;
  }
  return nullptr;
}

// Shows window at the size of a 1280x720 screen; returns whether it was exposed.
bool showOnSmallScreen(MainWindow& window) {
  window.resize(1280, 720);
  window.show();
  return QTest::qWaitForWindowExposed(&window);
}

// Opens step index and lets its page lay out.
void openStep(SetupSteps* steps, int index) {
  steps->setCurrentIndex(index);
  QCoreApplication::processEvents();
}

// Returns the WCAG relative luminance of a colour.
double luminance(QRgb rgb) {
  auto channel = [](int value) {
    const double c = value / 255.0;
    return c <= 0.03928 ? c / 12.92 : std::pow((c + 0.055) / 1.055, 2.4);
  };
  return 0.2126 * channel(qRed(rgb)) + 0.7152 * channel(qGreen(rgb)) + 0.0722 * channel(qBlue(rgb));
}

// Returns how many pixels of each colour a painted widget has.
QHash<QRgb, int> paintedColourCounts(QWidget* widget) {
  const QImage image = widget->grab().toImage().convertToFormat(QImage::Format_RGB32);
  QHash<QRgb, int> counts;
  for (int y = 0; y < image.height(); ++y)
    for (int x = 0; x < image.width(); ++x) ++counts[image.pixel(x, y)];
  return counts;
}

// Returns the commonest colour of counts.
QRgb commonestColour(const QHash<QRgb, int>& counts) {
  QRgb commonest = 0;
  int most = -1;
  for (auto it = counts.constBegin(); it != counts.constEnd(); ++it)
    if (it.value() > most) std::tie(commonest, most) = std::make_pair(it.key(), it.value());
  return commonest;
}

// Returns the commonest colour of a painted widget (its background).
QRgb paintedBackground(QWidget* widget) {
  return commonestColour(paintedColourCounts(widget));
}

// Returns the contrast ratio (1 to 21) between the commonest colour of a painted widget (its
// background) and the colour that stands out most from it (its text).
double paintedTextContrast(QWidget* widget) {
  const QHash<QRgb, int> counts = paintedColourCounts(widget);
  const QRgb background = commonestColour(counts);
  const double lb = luminance(background);
  double best = 1.0;
  for (auto it = counts.constBegin(); it != counts.constEnd(); ++it) {
    const double lt = luminance(it.key());
    best = std::max(best, (std::max(lb, lt) + 0.05) / (std::min(lb, lt) + 0.05));
  }
  return best;
}

// Checks that a plot's frame takes its colours from palette.
void verifyPlotFollows(QCustomPlot* plot, const QPalette& palette) {
  QCOMPARE(plot->axisRect()->backgroundBrush().color(), palette.color(QPalette::Base));
  QCOMPARE(plot->xAxis->basePen().color(), palette.color(QPalette::Text));
  QCOMPARE(plot->yAxis->tickLabelColor(), palette.color(QPalette::Text));
}

}  // namespace

class LookAndFeelTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { QLocale::setDefault(QLocale::c()); }

  void countsAreGrouped() {
    QCOMPARE(sluice::ui::formatCount(1278183), QString("1,278,183"));
    QCOMPARE(sluice::ui::formatCount(0), QString("0"));
    QCOMPARE(sluice::ui::formatCount(-4200), QString("-4,200"));
    QCOMPARE(sluice::ui::formatRate(412.31, "tok/s"), QString("412.3 tok/s"));
    QCOMPARE(sluice::ui::formatRate(-1.0, "tok/s"), QString("—"));
    QCOMPARE(sluice::ui::formatDecimal(1234.5, 1), QString("1,234.5"));
  }

  void theRunSummaryGroupsItsCounts() {
    sluice::ui::RunSummary summary;
    sluice::StepStats stats;
    stats.total_generation_tokens = 1278183;
    stats.generation_tokens_per_s = 4123.4;
    summary.addStats(stats);
    const QString text = summary.describe(12345, 0, 0, 310.0, 0.0);
    QVERIFY2(text.contains("12,345 rows"), qPrintable(text));
    QVERIFY2(text.contains("1,278,183 tokens"), qPrintable(text));
    QVERIFY2(text.contains("4,123.4 peak"), qPrintable(text));
  }

  // The progress text sits in a label beside the bar, not over the fill, and groups its counts.
  void progressTextIsBesideTheBar() {
    sluice::ui::RunControls controls;
    controls.setReady(true);
    controls.setState(sluice::ui::RunControls::State::Running);
    controls.setProgress(1250, 5000);
    QVERIFY(!controls.progressBar()->isTextVisible());
    QCOMPARE(controls.progressText()->text(), QString("1,250 of 5,000 rows · 25%"));
    controls.clearLoading();  // a model loaded behind the rows' progress: it stays
    QCOMPARE(controls.progressText()->text(), QString("1,250 of 5,000 rows · 25%"));
    controls.clearProgress();
    QCOMPARE(controls.progressText()->text(), QString());
  }

  // All three numbered steps show at once, whichever step is open, on a 1280x720 window.
  void theStepsAreAlwaysVisible() {
    MainWindow window;
    QVERIFY(showOnSmallScreen(window));
    SetupSteps* steps = window.setupSteps();
    QVERIFY(steps);
    // A tall page scrolls: the setup never makes the window taller than a 1280x720 screen.
    QVERIFY2(window.minimumSizeHint().height() <= 720,
             qPrintable(QString::number(window.minimumSizeHint().height())));
    const QStringList titles = {"1  Model", "2  Instructions", "3  Parameters"};
    for (int open = 0; open < steps->count(); ++open) {
      openStep(steps, open);
      for (int i = 0; i < titles.size(); ++i) {
        QCOMPARE(steps->stepTitle(i), titles[i]);
        QPushButton* button = steps->stepButton(i);
        QVERIFY2(button->isVisible() && button->text().contains(titles[i]),
                 qPrintable(button->text()));
        const QRect inWindow(button->mapTo(&window, QPoint(0, 0)), button->size());
        QVERIFY2(window.rect().contains(inWindow),
                 qPrintable(QString("%1 at y %2").arg(titles[i]).arg(inWindow.y())));
      }
    }
    steps->setCurrentWidget(window.parametersPanel());
    QCOMPARE(steps->currentWidget(), static_cast<QWidget*>(window.parametersPanel()));
    QVERIFY(steps->stepButton(2)->isChecked());
  }

  // A step says what it holds and whether it is done.
  void theModelStepShowsTheLoadedModel() {
    MainWindow window;
    SetupSteps* steps = window.setupSteps();
    QVERIFY(!steps->isStepDone(0));
    QSignalSpy ready(&window, &MainWindow::modelReady);
    window.preloadModel(QString::fromStdString(
        sluice::test::shared_path("models/stories260K/gguf/stories260K-f32.gguf")));
    QVERIFY(ready.wait(60000));
    QVERIFY(steps->isStepDone(0));
    QCOMPARE(steps->stepState(0), QString("stories260K-f32.gguf · loaded"));
    QVERIFY2(steps->stepButton(0)->text().contains("stories260K-f32.gguf · loaded"),
             qPrintable(steps->stepButton(0)->text()));
    QVERIFY(steps->isStepDone(2));  // the default parameters are valid
    QVERIFY2(steps->stepState(2).contains("greedy") || steps->stepState(2).contains("temperature"),
             qPrintable(steps->stepState(2)));
  }

  // The Instructions step says which reasoning controls are set, after the file's state.
  void theInstructionsStepSaysTheReasoningControls() {
    MainWindow window;
    SetupSteps* steps = window.setupSteps();
    QSignalSpy loaded(window.datasetPanel(), &sluice::ui::DatasetPanel::datasetLoaded);
    window.datasetPanel()->setDatasetPath(
        QString::fromStdString(sluice::test::shared_path("datasets/en/alpaca_5000.json")));
    QVERIFY(loaded.wait(60000));
    QVERIFY2(steps->stepState(1).startsWith("alpaca_5000.json · "),
             qPrintable(steps->stepState(1)));
    QVERIFY(!steps->stepState(1).contains("thinking"));
    QComboBox* thinking = window.datasetPanel()->reasoningPanel()->thinkingCombo();
    thinking->setCurrentIndex(thinking->findText("Off"));
    QVERIFY2(steps->stepState(1).endsWith(" · thinking off"), qPrintable(steps->stepState(1)));
    thinking->setCurrentIndex(0);
    QVERIFY(!steps->stepState(1).contains("thinking"));
  }

  // No label of the setup pages touches the window's left edge.
  void labelsKeepAMargin() {
    MainWindow window;
    QVERIFY(showOnSmallScreen(window));
    SetupSteps* steps = window.setupSteps();
    for (int page = 0; page < steps->count(); ++page) {
      openStep(steps, page);
      for (QLabel* label : steps->currentWidget()->findChildren<QLabel*>()) {
        if (!label->isVisible() || label->text().isEmpty()) continue;
        const int x = label->mapTo(&window, QPoint(0, 0)).x() + label->contentsRect().x();
        QVERIFY2(x >= SetupSteps::kMarginPx,
                 qPrintable(QString("\"%1\" at x %2").arg(label->text().left(30)).arg(x)));
      }
    }
  }

  void theToolbarShowsTheMenusActions() {
    MainWindow window;
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QToolBar* toolBar = window.mainToolBar();
    QVERIFY(toolBar && toolBar->isVisible());
    const QList<QAction*> actions = toolBar->actions();
    for (const QString text :
         {"Open model…", "Open instructions…", "Start", "Pause / resume", "Cancel…", "Export…"}) {
      QAction* action = actionNamed(actions, text);
      QVERIFY2(action, qPrintable(text));
      // The same QAction as the menus' (one command, one action).
      QVERIFY2(action->associatedObjects().size() >= 2, qPrintable(text));
    }
    // Nothing to start or cancel yet; Esc is no shortcut of Cancel.
    QVERIFY(!actionNamed(actions, "Start")->isEnabled());
    QVERIFY(!actionNamed(actions, "Cancel…")->isEnabled());
    QVERIFY(actionNamed(actions, "Cancel…")->shortcut().isEmpty());
  }

  void theViewMenuTogglesWhatItSays() {
    MainWindow window;
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QMenu* view = window.viewMenu();
    QVERIFY(view);
    const QList<QAction*> actions = view->actions();

    // Each toggle is checked at first, hides its part when triggered and shows it again.
    QTabWidget* tabs = window.tabs();
    const QList<std::pair<QString, std::function<bool()>>> toggles = {
        {"Toolbar", [&] { return window.mainToolBar()->isVisible(); }},
        {"Setup panel", [&] { return window.setupSteps()->isVisible(); }},
        {"Live plots", [&] { return tabs->isTabVisible(0); }},
    };
    for (const auto& [text, isShown] : toggles) {
      QAction* toggle = actionNamed(actions, text);
      QVERIFY2(toggle && toggle->isChecked() && isShown(), qPrintable(text));
      toggle->trigger();
      QVERIFY2(!toggle->isChecked() && !isShown(), qPrintable(text));
      toggle->trigger();
      QVERIFY2(toggle->isChecked() && isShown(), qPrintable(text));
    }

    // Ctrl+1 … one per tab, in tab order.
    for (int i = 0; i < tabs->count(); ++i) {
      QAction* tab = actionNamed(actions, tabs->tabText(i));
      QVERIFY2(tab, qPrintable(tabs->tabText(i)));
      QCOMPARE(tab->shortcut(), QKeySequence(Qt::CTRL | static_cast<Qt::Key>(Qt::Key_1 + i)));
    }
    QTest::keyClick(&window, Qt::Key_3, Qt::ControlModifier);
    QCOMPARE(tabs->currentIndex(), 2);
    actionNamed(actions, tabs->tabText(5))->trigger();
    QCOMPARE(tabs->currentIndex(), 5);
  }

  // The plots take the application's palette, also when it changes while they are shown.
  void thePlotsFollowADarkPalette() {
    const QPalette before = QApplication::palette();
    sluice::ui::LivePlots plots;
    sluice::ui::LengthHistogram histogram;
    plots.show();
    histogram.show();
    QApplication::setPalette(sluice::ui::darkPalette());
    QCoreApplication::processEvents();
    const QPalette dark = plots.palette();
    QCOMPARE(dark.color(QPalette::Base), sluice::ui::darkPalette().color(QPalette::Base));
    const QList<QCustomPlot*> live = plots.findChildren<QCustomPlot*>();
    QVERIFY(!live.isEmpty());
    for (QCustomPlot* plot : live) verifyPlotFollows(plot, dark);
    QCustomPlot* lengths = histogram.findChild<QCustomPlot*>();
    QVERIFY(lengths);
    verifyPlotFollows(lengths, histogram.palette());
    QApplication::setPalette(before);
    QCoreApplication::processEvents();
    verifyPlotFollows(lengths, histogram.palette());
  }

  // The setup steps in the dark palette (`sluice gui --palette dark`): every step button, the
  // open one, a done one and those still to do, is drawn on the palette's dark background (no
  // light box) and shows its title and state with at least the contrast WCAG asks of text
  // (4.5:1), measured on the painted pixels.
  void theStepsReadInTheDarkPalette() {
    const QPalette before = QApplication::palette();
    const QString styleBefore = QApplication::style()->name();
    {
      // `sluice gui` builds its window, then applies --palette: the steps exist before it.
      MainWindow window;
      QVERIFY(sluice::ui::applyPaletteNamed("dark"));
      QVERIFY(showOnSmallScreen(window));
      SetupSteps* steps = window.setupSteps();
      steps->setStepState(0, "stories260K-f32.gguf · loaded", true);
      steps->setStepState(1, "alpaca_5000.json · 5,000 rows", false);
      openStep(steps, 1);
      const double windowLuminance = luminance(window.palette().color(QPalette::Window).rgb());
      for (int i = 0; i < steps->count(); ++i) {
        // Drawn in the palette's colours: no light box in a dark window.
        const double background = luminance(paintedBackground(steps->stepButton(i)));
        QVERIFY2(std::abs(background - windowLuminance) < 0.15,
                 qPrintable(QString("%1: background luminance %2, the window's %3")
                                .arg(steps->stepTitle(i))
                                .arg(background, 0, 'f', 3)
                                .arg(windowLuminance, 0, 'f', 3)));
        const double contrast = paintedTextContrast(steps->stepButton(i));
        QVERIFY2(contrast >= 4.5,
                 qPrintable(QString("%1: %2:1 (%3)")
                                .arg(steps->stepTitle(i))
                                .arg(contrast, 0, 'f', 2)
                                .arg(steps->stepButton(i)->isChecked() ? "open" : "closed")));
      }
      QVERIFY(sluice::test::saveShot(window, "setup-steps-dark"));
    }
    QApplication::setStyle(styleBefore);
    QApplication::setPalette(before);
  }
};

QTEST_MAIN(LookAndFeelTest)
#include "look_and_feel_test.moc"
