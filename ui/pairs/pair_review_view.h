// The Pairs tab: DPO pair review for jobs that ask for n >= 2 samples per prompt. It shows one
// row's prompt and two of its samples side by side; the person picks which is chosen (keys 1 and
// 2, or the buttons), marks the two a tie (T) or the row unusable (D to discard, or X), clears the
// decision, and moves to the next or previous row (J / K, or the arrow keys: Right / Down next,
// Left / Up previous). A decision (1, 2, T, D, X) moves on to the next row
// nobody reviewed yet (under the Reviewed or Ties filter: the next row the filter shows); Ctrl+Z
// undoes the last decisions one by one, storing the row's earlier decision again and showing the
// row with the samples it compared. The filter shows all rows, the unreviewed, the reviewed or
// the ties, the rows whose decision disagrees with the judge, or those where the judge's scores of
// the two samples compared are close (judge_verdict.h); J / K walk the rows it shows. The keys work
// as soon as the tab is shown: the view takes the keyboard focus then, unless the focus is inside
// it already. With n > 2 the two combo boxes pick which samples are compared: by default the
// judge's best (left) and worst (right).
//
// When the judge step has scored the samples (SampleResult::extra, judge_verdict.h), each side
// shows its score and rationale (JudgeNote: folded, whole on a click or in the tooltip) and the
// judge's verdict is the pre-filled decision ("Judge: left (4.5 vs 2.0)"): Enter confirms it, and
// 1 / 2 / T / D overrule it. A person's decision is stored and wins over the judge in the export;
// rows nobody decided export by the rule (--dpo-rule score: the judge's order). A thinking model's
// samples compare by their answers; "Show reasoning" (R) opens each side's reasoning above its
// answer (ReasoningFold), for both sides and every row until it is closed. The words only one side
// has are marked in amber (left) and blue (right), never in the verdicts' green and red
// (pair_colors.h). Decisions are stored in the job file at once (PairPickStore), so they survive a
// restart, and `sluice jobs export
// --format dpo` (and the Export dialog) take them over the automatic rule.
//
// Reads and writes the job off the GUI thread (PairJobAccess), one row at a time: a row shows once
// it has been read; decisions show at once and are stored in the order they were made. While the
// next row is being read, 1 / 2 / T / D / X / Enter do nothing (they would decide the row being
// left).
#pragma once

#include <QString>
#include <QWidget>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "engine/jobs/pair_pick.h"
#include "engine/jobs/row_result.h"
#include "ui/pairs/judge_verdict.h"

class QComboBox;
class QKeySequence;
class QLabel;
class QPlainTextEdit;
class QPushButton;

namespace sluice::ui {

class JudgeNote;
class PairJobAccess;
class ReasoningFold;

class PairReviewView final : public QWidget {
  Q_OBJECT

 public:
  // Which rows J / K walk (and the filter combo shows).
  // Disagree: a decision the judge's scores contradict (disagreesWithJudge); SmallMargin: the two
  // samples compared scored within smallMargin() of each other (isSmallMargin).
  enum class RowFilter : int { All, Unreviewed, Reviewed, Ties, Disagree, SmallMargin };

  explicit PairReviewView(QWidget* parent = nullptr);
  ~PairReviewView() override;

  // Shows the job at jobPath (empty: nothing), from its first done row; the same path again
  // picks up rows finished since and keeps the current row.
  void setJobPath(const QString& jobPath);
  QString jobPath() const { return m_jobPath; }

  // The row shown (-1 when none), its position among the reviewable rows, and how many there are.
  qint64 currentRowIndex() const;
  int currentPosition() const { return m_position; }
  int numRows() const { return static_cast<int>(m_rowIndices.size()); }
  // The samples compared, left and right (sample indices).
  int leftSample() const;
  int rightSample() const;
  void setCompared(int leftSample, int rightSample);
  // The stored decision of the row shown (a pick, a tie or unusable), if any.
  std::optional<sluice::PairPick> currentPick() const { return m_pick; }
  // The row filter, and the rows it shows in order (row indices).
  RowFilter filter() const;
  void setFilter(RowFilter filter);
  std::vector<int64_t> filteredRows() const;
  QComboBox* filterCombo() const { return m_filter; }
  // True when Ctrl+Z has a decision to undo.
  bool canUndo() const { return !m_undo.empty(); }
  // What the status line says: the row, its pick, and how many rows are reviewed.
  QString statusText() const;
  // Why nothing can be reviewed ("" when a row is shown).
  QString messageText() const;
  QPlainTextEdit* leftText() const { return m_leftText; }
  QPlainTextEdit* rightText() const { return m_rightText; }
  // Each side's verdict and sample line ("CHOSEN · 3 tokens, stop"), coloured by pair_colors.
  QLabel* leftVerdict() const { return m_leftVerdict; }
  QLabel* rightVerdict() const { return m_rightVerdict; }
  // Each side's reasoning, hidden when its sample has none.
  ReasoningFold* leftReasoning() const { return m_leftReasoning; }
  ReasoningFold* rightReasoning() const { return m_rightReasoning; }
  // "Show reasoning (R)", enabled when a side's sample has reasoning.
  QPushButton* reasoningButton() const { return m_reasoningButton; }
  bool isReasoningShown() const { return m_isReasoningShown; }
  // Each side's judge note (hidden when its sample was not judged), and the judge's verdict line
  // ("Judge: left (4.5 vs 2.0)"; hidden when the two samples shown are not both scored).
  JudgeNote* leftJudge() const { return m_leftJudge; }
  JudgeNote* rightJudge() const { return m_rightJudge; }
  QLabel* judgeLine() const { return m_judgeLine; }
  // The judge's verdict on the two samples shown, if both are scored.
  std::optional<JudgeVerdict> currentJudgeVerdict() const;
  // True while a read or a pick's write has not come back yet.
  bool isBusy() const;

 public slots:
  void chooseLeft();    // key 1: the left sample is chosen, the right rejected
  void chooseRight();   // key 2: the right sample is chosen, the left rejected
  void markUnusable();  // key X
  void markTie();       // key T: the two samples compared are equally good
  void acceptJudge();   // Enter: the judge's verdict on the samples shown becomes the decision
  void undo();          // Ctrl+Z: the last decision made here is taken back
  // Key R: opens (or closes) the reasoning of both sides, for this row and the next ones.
  void toggleReasoning();
  void setReasoningShown(bool isShown);
  void clearPick();
  void nextRow();      // key J
  void previousRow();  // key K

 protected:
  void showEvent(QShowEvent* event) override;
  // A palette change (light to dark) paints the word marks and verdicts again in its colours.
  void changeEvent(QEvent* event) override;

 private:
  void buildUi();
  void addShortcut(const QKeySequence& keys, void (PairReviewView::*slot)());
  // Reads the reviewable rows (done rows) again, keeping the current row where it still is (and
  // then moving to the next one the filter shows when advance is true).
  void reloadRows(bool advance = false);
  void applyRows(const std::vector<int64_t>& rowIndices, int numSamplesAsked,
                 std::map<int64_t, sluice::PairPick> decisions, bool advance);
  // The judge's scores of rowIndex's samples (empty when none were judged).
  const SampleScores& scoresOfRow(int64_t rowIndex) const;
  // The judge's verdict line and each side's note, for the row and samples shown.
  void updateJudge();
  bool isReviewed(int64_t rowIndex) const { return m_decisions.count(rowIndex) > 0; }
  bool matchesFilter(int64_t rowIndex) const;
  // The first position from `from` in steps of step (+1 or -1) whose row the filter shows (and,
  // with isUnreviewedOnly, nobody reviewed); with isWrapping it goes round the ends. -1: none.
  int findPosition(int from, int step, bool isUnreviewedOnly, bool isWrapping) const;
  void applyFilter();
  // Records decision for the row shown (nullopt: clears it), undoably, then moves on to the next
  // unreviewed row when advance is true.
  void decide(const std::optional<sluice::PairPick>& decision, bool advance);
  // Stores (or clears) rowIndex's decision in the job and in the view.
  void writeDecision(int64_t rowIndex, const std::optional<sluice::PairPick>& decision);
  void advanceAfterDecision();
  // Reads the row at position and shows it once it arrives.
  void showRow(int position);
  void displayRow(int position);
  void showSamples();
  void updateStatus();
  void showMessage(const QString& message);

  QString m_jobPath;
  bool m_isJobOpen = false;  // its rows were asked for and did not fail
  PairJobAccess* m_access = nullptr;
  int m_numSamplesAsked = 0;  // the job's n
  std::vector<int64_t> m_rowIndices;
  int m_position = -1;
  int m_requestedPosition = -1;  // the row being read (J / K move on from it), or m_position
  int64_t m_requestedRow = -1;   // the row being read
  bool m_isReadingRow = false;   // a row asked for has not been shown yet
  quint64 m_numRowReads = 0;     // row reads asked for; only the last one's row is shown
  std::optional<sluice::RowResult> m_row;
  std::optional<sluice::PairPick> m_pick;
  std::map<int64_t, sluice::PairPick> m_decisions;  // every row's stored decision
  std::map<int64_t, SampleScores> m_scores;         // the judge's scores of the rows judged
  JudgeScale m_judgeScale = JudgeScale::Rating;
  int m_numPickWrites = 0;  // decisions stored or cleared so far (reads older than one miss it)
  // One decision made here: the row's decision before it and the samples it compared.
  struct UndoStep {
    int64_t rowIndex = 0;
    std::optional<sluice::PairPick> before;
    int leftSample = 0;
    int rightSample = 1;
  };
  std::vector<UndoStep> m_undo;
  // The samples to compare when the row an undo went back to arrives.
  std::optional<UndoStep> m_restoreCompared;
  QString m_lastAction;  // what the last decision or undo did, for the status line
  bool m_isReasoningShown = false;

  QLabel* m_message = nullptr;
  QWidget* m_review = nullptr;
  QLabel* m_rowLabel = nullptr;
  QComboBox* m_filter = nullptr;
  QPlainTextEdit* m_prompt = nullptr;
  QComboBox* m_leftCombo = nullptr;
  QComboBox* m_rightCombo = nullptr;
  QPlainTextEdit* m_leftText = nullptr;
  QPlainTextEdit* m_rightText = nullptr;
  ReasoningFold* m_leftReasoning = nullptr;
  ReasoningFold* m_rightReasoning = nullptr;
  QPushButton* m_reasoningButton = nullptr;
  QLabel* m_leftVerdict = nullptr;
  QLabel* m_rightVerdict = nullptr;
  JudgeNote* m_leftJudge = nullptr;
  JudgeNote* m_rightJudge = nullptr;
  QLabel* m_judgeLine = nullptr;
  QLabel* m_status = nullptr;
};

}  // namespace sluice::ui
