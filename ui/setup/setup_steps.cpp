#include "ui/setup/setup_steps.h"

#include <QButtonGroup>
#include <QEvent>
#include <QFontMetrics>
#include <QFrame>
#include <QPushButton>
#include <QResizeEvent>
#include <QScrollArea>
#include <QStackedWidget>
#include <QVBoxLayout>
#include <algorithm>

#include "ui/common/run_view_palette.h"
#include "ui/common/wheel_guard.h"

namespace sluice::ui {

namespace {

// The step buttons' look, from the widget's palette: a style's own flat-button look keeps the
// colours it had when the buttons were made (a light box under `--palette dark`, applied after
// the window exists).
QString stepButtonStyle(const QPalette& colours) {
  const QColor window = colours.color(QPalette::Window);
  const QColor text = colours.color(QPalette::WindowText);
  const QColor highlight = colours.color(QPalette::Highlight);
  const QColor open = run_view_palette::blend(window, highlight, 0.3);
  const QColor hovered = run_view_palette::blend(window, text, 0.08);
  return QString(
             "QPushButton { text-align: left; padding: 3px 6px; border: 1px solid transparent; "
             "border-radius: 3px; background: transparent; color: %1; }"
             "QPushButton:hover { background: %2; }"
             "QPushButton:checked { background: %3; border-color: %4; }")
      .arg(text.name(), hovered.name(), open.name(), highlight.name());
}

}  // namespace

SetupSteps::SetupSteps(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(0);
  auto* column = new QWidget(this);
  column->setObjectName("setupStepList");
  m_stepColumn = new QVBoxLayout(column);
  m_stepColumn->setContentsMargins(kMarginPx, kMarginPx, kMarginPx, kMarginPx / 2);
  m_stepColumn->setSpacing(2);
  m_buttons = new QButtonGroup(this);
  m_buttons->setExclusive(true);
  connect(m_buttons, &QButtonGroup::idClicked, this, &SetupSteps::setCurrentIndex);
  auto* line = new QFrame(this);
  line->setFrameShape(QFrame::HLine);
  line->setFrameShadow(QFrame::Sunken);
  m_pages = new QStackedWidget(this);
  connect(m_pages, &QStackedWidget::currentChanged, this, [this](int index) {
    if (QAbstractButton* button = m_buttons->button(index)) button->setChecked(true);
    emit currentChanged(index);
  });
  layout->addWidget(column);
  layout->addWidget(line);
  layout->addWidget(m_pages, 1);
}

int SetupSteps::addStep(QWidget* page, const QString& title, bool isNumbered) {
  Step step;
  step.title = isNumbered ? tr("%1  %2").arg(++m_numNumbered).arg(title) : title;
  step.page = page;
  step.button = new QPushButton(this);
  step.button->setCheckable(true);
  step.button->setFlat(true);
  step.button->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
  step.button->setStyleSheet(stepButtonStyle(palette()));
  // The page sits in a frame of its own so every page gets the same margins, and the frame in
  // a scroll area so a tall page scrolls instead of making the window taller than the screen.
  auto* frame = new QWidget;
  auto* frameLayout = new QVBoxLayout(frame);
  frameLayout->setContentsMargins(kMarginPx, kMarginPx / 2, kMarginPx, kMarginPx);
  frameLayout->addWidget(page);
  auto* scroll = new QScrollArea(m_pages);
  scroll->setFrameShape(QFrame::NoFrame);
  scroll->setWidgetResizable(true);
  scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  scroll->setWidget(frame);
  // The wheel scrolls the page: it changes a field's value only once the field has the focus.
  WheelGuard::install(frame);
  const int index = m_pages->addWidget(scroll);
  m_buttons->addButton(step.button, index);
  m_stepColumn->addWidget(step.button);
  m_steps.append(step);
  updateButton(m_steps.back());
  if (index == 0) step.button->setChecked(true);
  return index;
}

void SetupSteps::changeEvent(QEvent* event) {
  QWidget::changeEvent(event);
  if (event->type() != QEvent::PaletteChange) return;
  const QString style = stepButtonStyle(palette());
  for (const Step& step : m_steps)
    if (step.button->styleSheet() != style) step.button->setStyleSheet(style);
}

void SetupSteps::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  for (const Step& step : m_steps) updateButton(step);
}

int SetupSteps::stateLineWidth() const {
  // Before the first layout the width is not known yet: the column's usual width at 1280 px.
  constexpr int kUsualWidthPx = 370;
  constexpr int kButtonPaddingPx = 16;  // the stylesheet's 6 px a side and the border
  const int column = width() > 0 && isVisible() ? width() : kUsualWidthPx;
  return std::max(120, column - 2 * kMarginPx - kButtonPaddingPx);
}

void SetupSteps::setStepState(int index, const QString& state, bool isDone) {
  if (index < 0 || index >= m_steps.size()) return;
  Step& step = m_steps[index];
  step.state = state;
  step.isDone = isDone;
  updateButton(step);
}

void SetupSteps::updateButton(const Step& step) {
  // ✓ for a done step; an open circle for one that still needs something.
  const QString mark = step.isDone ? QStringLiteral("✓") : QStringLiteral("○");
  QString text = mark + "  " + step.title;
  const QFontMetrics metrics(step.button->font());
  const QString indent = QStringLiteral("      ");
  const int lineWidth = stateLineWidth() - metrics.horizontalAdvance(indent);
  if (!step.state.isEmpty()) {
    for (const QString& line : step.state.split('\n'))
      text += "\n" + indent + metrics.elidedText(line, Qt::ElideRight, lineWidth);
  }
  step.button->setText(text);
  step.button->setToolTip(step.state);
}

int SetupSteps::count() const {
  return m_pages->count();
}

int SetupSteps::currentIndex() const {
  return m_pages->currentIndex();
}

QWidget* SetupSteps::currentWidget() const {
  const int index = currentIndex();
  return index >= 0 && index < m_steps.size() ? m_steps[index].page : nullptr;
}

void SetupSteps::setCurrentIndex(int index) {
  m_pages->setCurrentIndex(index);
}

int SetupSteps::indexOf(QWidget* page) const {
  for (int i = 0; i < m_pages->count(); ++i) {
    if (m_pages->widget(i)->isAncestorOf(page)) return i;
  }
  return -1;
}

void SetupSteps::setCurrentWidget(QWidget* page) {
  const int index = indexOf(page);
  if (index >= 0) setCurrentIndex(index);
}

QString SetupSteps::stepTitle(int index) const {
  return m_steps.value(index).title;
}

QString SetupSteps::stepState(int index) const {
  return m_steps.value(index).state;
}

bool SetupSteps::isStepDone(int index) const {
  return m_steps.value(index).isDone;
}

QPushButton* SetupSteps::stepButton(int index) const {
  return m_steps.value(index).button;
}

}  // namespace sluice::ui
