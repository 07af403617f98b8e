#include "ui/pairs/judge_note.h"

#include <QFontMetrics>
#include <QMouseEvent>
#include <QTextLayout>

namespace sluice::ui {

JudgeNote::JudgeNote(QWidget* parent) : QLabel(parent) {
  setTextFormat(Qt::PlainText);
  setWordWrap(true);
  setAlignment(Qt::AlignLeft | Qt::AlignTop);
  // The layout gives the width; the folded text never asks for more.
  setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  setCursor(Qt::PointingHandCursor);
}

void JudgeNote::setNote(const QString& note) {
  m_note = note;
  m_isExpanded = false;
  m_foldedWidth = -1;
  setToolTip(note);
  refold();
}

void JudgeNote::setExpanded(bool isExpanded) {
  if (isExpanded == m_isExpanded) return;
  m_isExpanded = isExpanded;
  m_foldedWidth = -1;
  refold();
}

void JudgeNote::mousePressEvent(QMouseEvent* event) {
  if (event->button() == Qt::LeftButton && (m_isCut || m_isExpanded)) {
    setExpanded(!m_isExpanded);
    event->accept();
    return;
  }
  QLabel::mousePressEvent(event);
}

void JudgeNote::resizeEvent(QResizeEvent* event) {
  QLabel::resizeEvent(event);
  if (!m_isExpanded && width() != m_foldedWidth) refold();
}

void JudgeNote::refold() {
  const int lineWidth = std::max(40, contentsRect().width());
  if (m_isExpanded) {
    setText(m_note);
    return;
  }
  m_foldedWidth = width();
  // Wraps each paragraph at the width and keeps whole lines up to kFoldedLines; the last line
  // kept ends in "…" when anything follows it.
  const QFontMetrics metrics(font());
  QStringList lines;
  bool isCut = false;
  const QStringList paragraphs = m_note.split('\n');
  for (qsizetype p = 0; p < paragraphs.size() && !isCut; ++p) {
    const QString& paragraph = paragraphs[p];
    QTextLayout layout(paragraph, font());
    layout.beginLayout();
    for (QTextLine line = layout.createLine(); line.isValid(); line = layout.createLine()) {
      line.setLineWidth(lineWidth);
      if (lines.size() == kFoldedLines - 1) {
        // The last line: the rest of the paragraph elided, and "…" if more paragraphs follow.
        const QString rest = paragraph.mid(line.textStart());
        const bool isLastParagraph = p + 1 == paragraphs.size();
        QString shown = metrics.elidedText(rest, Qt::ElideRight, lineWidth);
        if (!isLastParagraph && shown == rest)
          shown = metrics.elidedText(rest + QStringLiteral(" …"), Qt::ElideRight, lineWidth);
        isCut = shown != rest || !isLastParagraph;
        lines << shown;
        break;
      }
      lines << paragraph.mid(line.textStart(), line.textLength()).trimmed();
    }
    layout.endLayout();
  }
  m_isCut = isCut;
  setText(lines.join('\n'));
}

}  // namespace sluice::ui
