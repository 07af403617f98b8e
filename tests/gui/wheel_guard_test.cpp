// Scrolling never changes a setting (issue 33): over the setup pages the mouse wheel scrolls the
// page unless the spin box or combo box under the pointer has the focus; with the focus it still
// changes the value.
#include <QAbstractSpinBox>
#include <QApplication>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QScrollArea>
#include <QScrollBar>
#include <QStandardPaths>
#include <QTest>
#include <QWheelEvent>

#include "tests/gui/gui_shots.h"
#include "ui/setup/parameters_panel.h"
#include "ui/setup/setup_steps.h"
#include "ui/setup/structured_output_panel.h"
#include "ui/window/main_window.h"

using sluice::ui::MainWindow;
using sluice::ui::StructuredOutputPanel;

namespace {

// The field a form row labels, e.g. "Repetition pen." (QFormLayout makes it the label's buddy).
QWidget* fieldLabelled(QWidget* root, const QString& label) {
  for (QLabel* each : root->findChildren<QLabel*>()) {
    if (each->text() == label) return each->buddy();
  }
  return nullptr;
}

QScrollArea* pageScrollArea(QWidget* page) {
  for (QWidget* above = page->parentWidget(); above; above = above->parentWidget()) {
    if (auto* area = qobject_cast<QScrollArea*>(above)) return area;
  }
  return nullptr;
}

// One notch of the wheel over the middle of widget: up for a positive notches, down otherwise.
void turnWheel(QWidget* widget, int notches) {
  const QPointF at = QRectF(widget->rect()).center();
  QWheelEvent wheel(at, widget->mapToGlobal(at), QPoint(), QPoint(0, 120 * notches), Qt::NoButton,
                    Qt::NoModifier, Qt::NoScrollPhase, false);
  QApplication::sendEvent(widget, &wheel);
}

// A field's value as text, to tell whether the wheel changed it.
QString fieldValue(const QWidget* field) {
  if (const auto* spin = qobject_cast<const QAbstractSpinBox*>(field)) return spin->text();
  if (const auto* combo = qobject_cast<const QComboBox*>(field))
    return QString::number(combo->currentIndex());
  return QString();
}

}  // namespace

class WheelGuardTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

  // The bug as reported: three notches over "Repetition pen." set it to 1.150, and the output
  // mode switched under the pointer. Now the page scrolls and both keep their values.
  void wheelOverAFieldWithoutFocusScrollsThePage() {
    MainWindow window;
    window.resize(1280, 720);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    sluice::ui::ParametersPanel* parameters = window.parametersPanel();
    window.setupSteps()->setCurrentWidget(parameters);
    auto* penalty = qobject_cast<QDoubleSpinBox*>(fieldLabelled(parameters, "Repetition pen."));
    QVERIFY(penalty != nullptr);
    QComboBox* mode = parameters->structuredOutput()->modeSelector();
    QScrollArea* page = pageScrollArea(parameters);
    QVERIFY(page != nullptr);
    QScrollBar* bar = page->verticalScrollBar();
    QTRY_VERIFY(bar->maximum() > 0);  // the Parameters page is taller than the window
    bar->setValue(0);
    QVERIFY(!penalty->hasFocus());
    QVERIFY(!mode->hasFocus());

    for (int i = 0; i < 3; ++i) turnWheel(penalty, 1);
    QCOMPARE(penalty->value(), 1.0);
    QCOMPARE(bar->value(), 0);  // already at the top: scrolling up goes nowhere
    turnWheel(penalty, -1);
    QCOMPARE(penalty->value(), 1.0);
    const int scrolled = bar->value();
    QVERIFY2(scrolled > 0, "the page did not scroll down");

    turnWheel(mode, -1);
    QCOMPARE(parameters->structuredOutput()->mode(), StructuredOutputPanel::Mode::FreeText);
    QVERIFY2(bar->value() > scrolled, "the page did not scroll on over the combo box");
    turnWheel(mode, 1);
    QCOMPARE(parameters->structuredOutput()->mode(), StructuredOutputPanel::Mode::FreeText);
    QVERIFY(sluice::test::saveShot(window, "wheel-guard-parameters"));
  }

  // Every spin box and combo box of every setup page (model, instructions, parameters with its
  // structured output, remote servers and reasoning sections, server) keeps its value under the
  // wheel without the focus, and the wheel alone never gives one the focus.
  void noSetupFieldChangesUnderTheWheel() {
    MainWindow window;
    window.resize(1280, 720);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    window.parametersPanel()->setRemote(true);  // shows the remote servers' fields too
    QList<QWidget*> fields;
    for (QWidget* each : window.setupSteps()->findChildren<QWidget*>()) {
      if (qobject_cast<QAbstractSpinBox*>(each) || qobject_cast<QComboBox*>(each)) fields << each;
    }
    QVERIFY2(fields.size() >= 20, qPrintable(QString::number(fields.size())));
    for (QWidget* field : fields) {
      QVERIFY(!field->hasFocus());
      const QString before = fieldValue(field);
      const QString name =
          QString("%1 \"%2\"").arg(field->metaObject()->className(), field->toolTip().left(40));
      turnWheel(field, 1);
      QVERIFY2(fieldValue(field) == before, qPrintable("changed by the wheel up: " + name));
      turnWheel(field, -1);
      QVERIFY2(fieldValue(field) == before, qPrintable("changed by the wheel down: " + name));
      QVERIFY2(field->focusPolicy() == Qt::StrongFocus, qPrintable("takes wheel focus: " + name));
    }
  }

  // A setting changed from its default shows in the Parameters step, even one the step's first
  // line does not name (the reported repetition penalty went unseen).
  void aChangedSettingShowsInTheParametersStep() {
    MainWindow window;
    constexpr int kParametersStep = 2;
    QVERIFY2(!window.setupSteps()->stepState(kParametersStep).contains('\n'),
             qPrintable(window.setupSteps()->stepState(kParametersStep)));
    auto* penalty =
        qobject_cast<QDoubleSpinBox*>(fieldLabelled(window.parametersPanel(), "Repetition pen."));
    QVERIFY(penalty != nullptr);
    penalty->setValue(1.15);
    const QString state = window.setupSteps()->stepState(kParametersStep);
    QVERIFY2(state.endsWith("\nrepetition penalty 1.15"), qPrintable(state));
  }

  // Once a field has the focus (clicked, or reached with Tab) the wheel changes it, and the page
  // stays where it is.
  void wheelOverTheFocusedFieldChangesIt() {
    MainWindow window;
    window.resize(1280, 720);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    window.activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(&window));
    sluice::ui::ParametersPanel* parameters = window.parametersPanel();
    window.setupSteps()->setCurrentWidget(parameters);
    auto* penalty = qobject_cast<QDoubleSpinBox*>(fieldLabelled(parameters, "Repetition pen."));
    QVERIFY(penalty != nullptr);
    QScrollBar* bar = pageScrollArea(parameters)->verticalScrollBar();
    QTRY_VERIFY(bar->maximum() > 0);
    bar->setValue(0);

    penalty->setFocus(Qt::TabFocusReason);
    QTRY_VERIFY(penalty->hasFocus());
    for (int i = 0; i < 3; ++i) turnWheel(penalty, 1);
    QCOMPARE(penalty->value(), 1.15);
    QCOMPARE(bar->value(), 0);

    QComboBox* mode = parameters->structuredOutput()->modeSelector();
    mode->setFocus(Qt::MouseFocusReason);
    QTRY_VERIFY(mode->hasFocus());
    turnWheel(mode, -1);
    QCOMPARE(parameters->structuredOutput()->mode(), StructuredOutputPanel::Mode::JsonSchema);
  }
};

QTEST_MAIN(WheelGuardTest)
#include "wheel_guard_test.moc"
