// A thinking model's reasoning, folded: a header "▸ Reasoning · 312 tokens" that opens and closes
// a read-only view of the text below it. Placed above an answer (a row's sample, a side of a
// pair) so the answer stays first to read and the reasoning is one click away. The text takes the
// owner's font for its answers (textView()).
#pragma once

#include <QString>
#include <QWidget>

class QPlainTextEdit;
class QToolButton;

namespace sluice::ui {

class ReasoningFold final : public QWidget {
  Q_OBJECT

 public:
  explicit ReasoningFold(QWidget* parent = nullptr);

  // Shows text (numTokens of the model's tokens) under the header; keeps the fold open or closed.
  void setReasoning(const QString& text, int numTokens);
  QString reasoningText() const;
  // The header's words ("Reasoning · 312 tokens").
  QString headerText() const;
  bool isExpanded() const;
  QToolButton* headerButton() const { return m_header; }
  QPlainTextEdit* textView() const { return m_text; }

 public slots:
  void setExpanded(bool isExpanded);

 signals:
  void expandedChanged(bool isExpanded);

 private:
  QToolButton* m_header = nullptr;
  QPlainTextEdit* m_text = nullptr;
};

}  // namespace sluice::ui
