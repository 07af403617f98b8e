// The setup as numbered steps ("1 Model", "2 Instructions", "3 Parameters", then extra pages
// such as the server): a column of step buttons that is always visible, each with its number, a
// one-line state ("stories260K-f32.gguf · loaded") and a mark when the step is done, above the
// page of the chosen step. Pages get the same content margins, so no label sits on the edge, and
// scroll under the wheel without changing the field under the pointer (WheelGuard).
#pragma once

#include <QWidget>

class QButtonGroup;
class QLabel;
class QResizeEvent;
class QStackedWidget;
class QPushButton;
class QVBoxLayout;

namespace sluice::ui {

class SetupSteps final : public QWidget {
  Q_OBJECT

 public:
  // Content margin of every page and of the step column, in pixels.
  static constexpr int kMarginPx = 10;

  explicit SetupSteps(QWidget* parent = nullptr);

  // Adds a page; numbered pages are the steps ("1 Model"), an unnumbered one is listed after
  // them without a number. Returns the page's index.
  int addStep(QWidget* page, const QString& title, bool isNumbered = true);
  // Sets what a step's button says under its title, and whether the step is done.
  void setStepState(int index, const QString& state, bool isDone);

  int count() const;
  int currentIndex() const;
  QWidget* currentWidget() const;
  void setCurrentIndex(int index);
  void setCurrentWidget(QWidget* page);
  int indexOf(QWidget* page) const;
  // The title shown for a step ("1  Model"), its state line and whether it is done.
  QString stepTitle(int index) const;
  QString stepState(int index) const;
  bool isStepDone(int index) const;
  QPushButton* stepButton(int index) const;

 signals:
  void currentChanged(int index);

 protected:
  void changeEvent(QEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;

 private:
  struct Step {
    QString title;
    QString state;
    bool isDone = false;
    QWidget* page = nullptr;
    QPushButton* button = nullptr;
  };
  // Sets the button's text: the mark and title, then the state's lines, each elided to the
  // column's width (a long state must not widen the column past the window's split).
  void updateButton(const Step& step);
  // The width a state line may take: the column less its margins, the indent and the padding.
  int stateLineWidth() const;

  QVBoxLayout* m_stepColumn = nullptr;
  QButtonGroup* m_buttons = nullptr;
  QStackedWidget* m_pages = nullptr;
  QList<Step> m_steps;
  int m_numNumbered = 0;
};

}  // namespace sluice::ui
