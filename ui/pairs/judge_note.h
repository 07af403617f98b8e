// One side's judge note in the Pairs tab: the judge's score (and ratings) on its first line, then
// the rationale, folded to a few lines ("…" where it is cut) so the two sides' answers keep the
// room; a click shows it whole and another folds it again, and the tooltip always holds it
// whole. Hidden when the sample was not judged.
#pragma once

#include <QLabel>
#include <QString>

namespace sluice::ui {

class JudgeNote final : public QLabel {
  Q_OBJECT

 public:
  // Lines shown while folded (the score line included).
  static constexpr int kFoldedLines = 3;

  explicit JudgeNote(QWidget* parent = nullptr);

  // The whole note (lines separated by '\n'); folded again.
  void setNote(const QString& note);
  QString note() const { return m_note; }
  bool isExpanded() const { return m_isExpanded; }
  void setExpanded(bool isExpanded);
  // True when folding cut something (a click then shows more).
  bool isCut() const { return m_isCut; }

 protected:
  void mousePressEvent(QMouseEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;

 private:
  // Lays the note out at the label's width: whole, or its first kFoldedLines lines.
  void refold();

  QString m_note;
  bool m_isExpanded = false;
  bool m_isCut = false;
  int m_foldedWidth = -1;  // the width the folded text was laid out for
};

}  // namespace sluice::ui
