// One row of a job in full, below the results table: the exact rendered prompt beside every sample
// with its token count and finish reason (a thinking model's reasoning folded above the answer,
// ReasoningFold, closed at first), the row's timings, seed and error, and a "Run this row
// alone" button. The button only asks (rowAloneRequested); the app's worker regenerates the row
// in isolation and answers through showRowAloneResult, which says plainly whether the output was
// identical (the determinism check a person can run on any row).
#pragma once

#include <QHash>
#include <QList>
#include <QSet>
#include <QString>
#include <QStringList>
#include <QWidget>

#include "engine/jobs/row_result.h"

class QLabel;
class QPlainTextEdit;
class QPushButton;
class QTabWidget;

namespace sluice::ui {

class ReasoningFold;

class RowDetailPane final : public QWidget {
  Q_OBJECT

 public:
  explicit RowDetailPane(QWidget* parent = nullptr);

  // Shows row in full (replacing what was shown); validity: a sentence per sample saying whether
  // its output follows the job's grammar (empty for free text).
  void showRow(const sluice::RowResult& row, const QStringList& validity = {});
  // Shows whether the shown row's outputs are valid, a sentence per sample (as showRow does).
  void setValidity(const QStringList& validity);
  // Shows nothing (no row selected).
  void clear();

  // Returns the job row index shown, or -1.
  qint64 rowIndex() const { return m_rowIndex; }
  // What is shown, for tests and accessibility: the prompt, each sample's output, the facts line
  // (tokens, speed, seed, timings), the error, and the last "run alone" answer for this row.
  QString promptText() const;
  QStringList sampleTexts() const;
  QStringList sampleTitles() const;
  QString factsText() const;
  QString errorText() const;
  // Whether the outputs are valid, one line per sample ("" for free text).
  QString validityText() const;
  QString rowAloneText() const;
  QPushButton* runAloneButton() const { return m_runAlone; }
  // The answer's text view of sample sampleIdx (nullptr past the row's samples).
  QPlainTextEdit* sampleView(int sampleIdx) const;
  // The folded reasoning above sample sampleIdx's answer (nullptr when it has none).
  ReasoningFold* reasoningFold(int sampleIdx) const;

 public slots:
  // The answer to rowAloneRequested(rowIndex): identical, or details names what differed (the
  // first differing sample). Kept per row, so it shows again when the row is selected again.
  void showRowAloneResult(qint64 rowIndex, bool identical, const QString& details);

 signals:
  void rowAloneRequested(qint64 rowIndex);

 private:
  void clearSamples();
  void requestRowAlone();
  void showRowAloneState();
  static QString factsFor(const sluice::RowResult& row);

  qint64 m_rowIndex = -1;
  QHash<qint64, QString> m_rowAloneHtml;  // the answer per row (rich text)
  QSet<qint64> m_rowsRunningAlone;

  QLabel* m_title = nullptr;
  QLabel* m_facts = nullptr;
  QLabel* m_error = nullptr;
  QLabel* m_validity = nullptr;
  QPushButton* m_runAlone = nullptr;
  QLabel* m_rowAloneLabel = nullptr;
  QPlainTextEdit* m_prompt = nullptr;
  QTabWidget* m_samples = nullptr;
  // Per sample of the row shown: the answer's view, and the reasoning's fold (nullptr: none).
  QList<QPlainTextEdit*> m_sampleViews;
  QList<ReasoningFold*> m_reasoningFolds;
};

}  // namespace sluice::ui
