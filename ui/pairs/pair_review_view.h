// The Pairs tab: DPO pair review for jobs that ask for n >= 2 samples per prompt. It shows one
// row's prompt and two of its samples side by side; the person picks which is chosen (keys 1 and
// 2, or the buttons), marks the row unusable (X), clears the pick, and moves to the next or
// previous row (J / K). With n > 2 the two combo boxes pick which samples are compared. A thinking
// model's samples compare by their answers; "Show reasoning" (R) opens each side's reasoning
// above its answer (ReasoningFold), for both sides and every row until it is closed. Picks are
// stored in the job file at once (PairPickStore), so they survive a restart, and `sluice jobs
// export --format dpo` (and the Export dialog) take them over the automatic rule.
//
// Reads and writes the job off the GUI thread (PairJobAccess), one row at a time: a row shows once
// it has been read; picks show at once and are stored in the order they were made.
#pragma once

#include <QString>
#include <QWidget>
#include <memory>
#include <optional>
#include <vector>

#include "engine/jobs/pair_pick.h"
#include "engine/jobs/row_result.h"

class QComboBox;
class QLabel;
class QPlainTextEdit;
class QPushButton;

namespace sluice::ui {

class PairJobAccess;
class ReasoningFold;

class PairReviewView final : public QWidget {
  Q_OBJECT

 public:
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
  // The stored pick of the row shown, if any.
  std::optional<sluice::PairPick> currentPick() const { return m_pick; }
  // What the status line says: the row, its pick, and how many rows are reviewed.
  QString statusText() const;
  // Why nothing can be reviewed ("" when a row is shown).
  QString messageText() const;
  QPlainTextEdit* leftText() const { return m_leftText; }
  QPlainTextEdit* rightText() const { return m_rightText; }
  // Each side's reasoning, hidden when its sample has none.
  ReasoningFold* leftReasoning() const { return m_leftReasoning; }
  ReasoningFold* rightReasoning() const { return m_rightReasoning; }
  // "Show reasoning (R)", enabled when a side's sample has reasoning.
  QPushButton* reasoningButton() const { return m_reasoningButton; }
  bool isReasoningShown() const { return m_isReasoningShown; }
  // True while a read or a pick's write has not come back yet.
  bool isBusy() const;

 public slots:
  void chooseLeft();    // key 1: the left sample is chosen, the right rejected
  void chooseRight();   // key 2: the right sample is chosen, the left rejected
  void markUnusable();  // key X
  // Key R: opens (or closes) the reasoning of both sides, for this row and the next ones.
  void toggleReasoning();
  void setReasoningShown(bool isShown);
  void clearPick();
  void nextRow();      // key J
  void previousRow();  // key K

 protected:
  void showEvent(QShowEvent* event) override;

 private:
  void buildUi();
  void addShortcut(Qt::Key key, void (PairReviewView::*slot)());
  // Reads the reviewable rows (done rows) again, keeping the current row where it still is (and
  // then moving to the next one when advance is true).
  void reloadRows(bool advance = false);
  void applyRows(const std::vector<int64_t>& rowIndices, int numSamplesAsked, int numPicked,
                 bool advance);
  // Reads the row at position and shows it once it arrives.
  void showRow(int position);
  void displayRow(int position);
  void showSamples();
  void storePick(const sluice::PairPick& pick);
  void updateStatus();
  void showMessage(const QString& message);

  QString m_jobPath;
  bool m_isJobOpen = false;  // its rows were asked for and did not fail
  PairJobAccess* m_access = nullptr;
  int m_numSamplesAsked = 0;  // the job's n
  std::vector<int64_t> m_rowIndices;
  int m_position = -1;
  int m_requestedPosition = -1;  // the row being read (J / K move on from it), or m_position
  std::optional<sluice::RowResult> m_row;
  std::optional<sluice::PairPick> m_pick;
  int m_numPicked = 0;
  int m_numPickWrites = 0;  // picks stored or cleared so far (reads older than one miss it)
  bool m_isReasoningShown = false;

  QLabel* m_message = nullptr;
  QWidget* m_review = nullptr;
  QLabel* m_rowLabel = nullptr;
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
  QLabel* m_status = nullptr;
};

}  // namespace sluice::ui
