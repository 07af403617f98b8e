#include "ui/common/reasoning_fold.h"

#include <QPlainTextEdit>
#include <QSignalBlocker>
#include <QToolButton>
#include <QVBoxLayout>

#include "ui/common/number_format.h"

namespace sluice::ui {

ReasoningFold::ReasoningFold(QWidget* parent) : QWidget(parent) {
  m_header = new QToolButton(this);
  m_header->setCheckable(true);
  m_header->setAutoRaise(true);
  m_header->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
  m_header->setArrowType(Qt::RightArrow);
  m_header->setToolTip(tr("Show or hide the model's reasoning before its answer"));
  m_text = new QPlainTextEdit(this);
  m_text->setReadOnly(true);
  m_text->setLineWrapMode(QPlainTextEdit::WidgetWidth);  // prose: wrapped, never scrolled sideways
  m_text->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  m_text->hide();

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(2);
  layout->addWidget(m_header, 0, Qt::AlignLeft);
  layout->addWidget(m_text, 1);

  connect(m_header, &QToolButton::toggled, this, &ReasoningFold::setExpanded);
  setExpanded(false);
}

void ReasoningFold::setReasoning(const QString& text, int numTokens) {
  m_text->setPlainText(text);
  // Without a count (0) the header names the section only.
  m_header->setText(numTokens <= 0   ? tr("Reasoning")
                    : numTokens == 1 ? tr("Reasoning · 1 token")
                                     : tr("Reasoning · %1 tokens").arg(formatCount(numTokens)));
}

QString ReasoningFold::reasoningText() const {
  return m_text->toPlainText();
}

QString ReasoningFold::headerText() const {
  return m_header->text();
}

bool ReasoningFold::isExpanded() const {
  return m_header->isChecked();
}

void ReasoningFold::setExpanded(bool isExpanded) {
  const bool wasExpanded = !m_text->isHidden();
  {
    const QSignalBlocker blocker(m_header);  // toggled() calls back here
    m_header->setChecked(isExpanded);
  }
  m_header->setArrowType(isExpanded ? Qt::DownArrow : Qt::RightArrow);
  m_text->setVisible(isExpanded);
  // Closed, the fold is one line high; open, it shares the height with the answer below it.
  setSizePolicy(QSizePolicy::Preferred, isExpanded ? QSizePolicy::Expanding : QSizePolicy::Maximum);
  if (wasExpanded != isExpanded) emit expandedChanged(isExpanded);
}

}  // namespace sluice::ui
