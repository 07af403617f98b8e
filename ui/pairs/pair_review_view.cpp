#include "ui/pairs/pair_review_view.h"

#include <QComboBox>
#include <QEvent>
#include <QHBoxLayout>
#include <QKeySequence>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QShortcut>
#include <QSplitter>
#include <QVBoxLayout>
#include <algorithm>

#include "ui/common/reasoning_fold.h"
#include "ui/pairs/pair_decision_text.h"
#include "ui/pairs/pair_job_access.h"
#include "ui/pairs/word_diff.h"

namespace sluice::ui {
namespace {

// At most this many decisions can be undone (each is a few bytes).
constexpr size_t kMaxUndoSteps = 10'000;

PairPick decisionOf(int64_t rowIndex, int chosen, int rejected, bool isUnusable = false,
                    bool isTie = false) {
  PairPick pick;
  pick.row_index = rowIndex;
  pick.chosen_sample_idx = chosen;
  pick.rejected_sample_idx = rejected;
  pick.is_unusable = isUnusable;
  pick.is_tie = isTie;
  return pick;
}

}  // namespace

PairReviewView::PairReviewView(QWidget* parent)
    : QWidget(parent), m_access(new PairJobAccess(this)) {
  // A click on the view's background focuses it too (showEvent focuses it when shown).
  setFocusPolicy(Qt::StrongFocus);
  buildUi();
  addShortcut(QKeySequence(Qt::Key_1), &PairReviewView::chooseLeft);
  addShortcut(QKeySequence(Qt::Key_2), &PairReviewView::chooseRight);
  addShortcut(QKeySequence(Qt::Key_X), &PairReviewView::markUnusable);
  addShortcut(QKeySequence(Qt::Key_D), &PairReviewView::markUnusable);  // discard
  addShortcut(QKeySequence(Qt::Key_T), &PairReviewView::markTie);
  addShortcut(QKeySequence(Qt::Key_J), &PairReviewView::nextRow);
  addShortcut(QKeySequence(Qt::Key_K), &PairReviewView::previousRow);
  addShortcut(QKeySequence(Qt::Key_Right), &PairReviewView::nextRow);
  addShortcut(QKeySequence(Qt::Key_Down), &PairReviewView::nextRow);
  addShortcut(QKeySequence(Qt::Key_Left), &PairReviewView::previousRow);
  addShortcut(QKeySequence(Qt::Key_Up), &PairReviewView::previousRow);
  addShortcut(QKeySequence(Qt::Key_Return), &PairReviewView::acceptJudge);
  addShortcut(QKeySequence(Qt::Key_Enter), &PairReviewView::acceptJudge);
  addShortcut(QKeySequence(Qt::Key_R), &PairReviewView::toggleReasoning);
  addShortcut(QKeySequence::Undo, &PairReviewView::undo);
  showMessage(tr("Open or run a job with n ≥ 2 samples per prompt to review its pairs."));
}

PairReviewView::~PairReviewView() = default;

void PairReviewView::addShortcut(const QKeySequence& keys, void (PairReviewView::*slot)()) {
  auto* shortcut = new QShortcut(keys, this);
  // Only while this tab (or a child, the texts and combos included) has the focus: it takes the
  // focus when shown, so the keys work at once, and never act while another tab is shown.
  shortcut->setContext(Qt::WidgetWithChildrenShortcut);
  connect(shortcut, &QShortcut::activated, this, slot);
}

void PairReviewView::setJobPath(const QString& jobPath) {
  if (jobPath == m_jobPath && m_isJobOpen) {
    reloadRows();
    return;
  }
  m_jobPath = jobPath;
  m_isJobOpen = !jobPath.isEmpty();
  m_access->setJobPath(jobPath);  // what is still being read for another job is dropped
  m_rowIndices.clear();
  m_decisions.clear();
  m_undo.clear();
  m_restoreCompared.reset();
  m_lastAction.clear();
  m_numSamplesAsked = 0;
  if (jobPath.isEmpty()) {
    showMessage(tr("Open or run a job with n ≥ 2 samples per prompt to review its pairs."));
    return;
  }
  showMessage(tr("Reading the job's rows…"));
  reloadRows();
}

bool PairReviewView::isBusy() const {
  return m_access->isBusy();
}

void PairReviewView::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  // The keys work as soon as the tab is shown, without a click into it first: the focus comes
  // here (from the setup panel, the tab bar, ...) unless it is inside the view already.
  const QWidget* focused = window()->focusWidget();
  if (focused != this && !isAncestorOf(focused)) setFocus(Qt::OtherFocusReason);
  if (m_isJobOpen) reloadRows();  // rows finished while another tab was shown
}

void PairReviewView::changeEvent(QEvent* event) {
  QWidget::changeEvent(event);
  // Queued: the children (the texts and labels whose palettes the colours come from) get the
  // new palette after this view.
  if (event->type() == QEvent::PaletteChange)
    QMetaObject::invokeMethod(
        this, [this] { showSamples(); }, Qt::QueuedConnection);
}

void PairReviewView::reloadRows(bool advance) {
  if (!m_isJobOpen) return;
  m_access->readRows(
      [this, advance, numPickWrites = m_numPickWrites](const PairJobAccess::Rows& rows) {
        if (!rows.error.isEmpty()) {
          m_isJobOpen = false;  // the next setJobPath() opens it again
          showMessage(rows.error);
          return;
        }
        // A decision made after this read was asked for is in the view already, and not in what
        // it read.
        applyRows(rows.rowIndices, rows.numSamplesAsked,
                  numPickWrites == m_numPickWrites ? rows.picks : m_decisions, advance);
        // The judge's scores of every row (for the filters and their counts) after the row just
        // asked for: a scan of the whole job, which should not hold back the first row.
        if (m_numSamplesAsked != 1 && !m_rowIndices.empty()) {
          m_access->readScores(m_numSamplesAsked, [this](const JudgeScores& scores) {
            m_scores = scores.by_row;
            m_judgeScale = judgeScaleOf(scores.rubric);
            updateStatus();
          });
        }
      });
}

void PairReviewView::applyRows(const std::vector<int64_t>& rowIndices, int numSamplesAsked,
                               std::map<int64_t, PairPick> decisions, bool advance) {
  m_numSamplesAsked = numSamplesAsked;
  if (m_numSamplesAsked == 1) {
    showMessage(tr("This job asks for n = %1 sample per prompt: a pair needs n ≥ 2. Set "
                   "\"Samples per prompt\" to 2 or more for a job whose pairs you want to review.")
                    .arg(m_numSamplesAsked));
    return;
  }
  const qint64 shownRow = currentRowIndex();
  m_rowIndices = rowIndices;
  m_decisions = std::move(decisions);
  if (m_rowIndices.empty()) {
    showMessage(tr("No finished rows yet: pairs appear here as rows finish."));
    return;
  }
  const auto it = std::find(m_rowIndices.begin(), m_rowIndices.end(), shownRow);
  if (it != m_rowIndices.end() && m_row) {
    m_position = static_cast<int>(it - m_rowIndices.begin());
    if (m_isReadingRow) {
      // The row asked for last (J, a decision moving on) shows when its read comes back; the
      // rows read now may have moved it.
      const auto requested = std::find(m_rowIndices.begin(), m_rowIndices.end(), m_requestedRow);
      if (requested != m_rowIndices.end()) {
        m_requestedPosition = static_cast<int>(requested - m_rowIndices.begin());
        updateStatus();
        return;
      }
      ++m_numRowReads;  // its row is gone: its read is dropped
      m_isReadingRow = false;
    }
    m_requestedPosition = m_position;
    const int next = advance ? findPosition(m_position, +1, false, false) : -1;
    if (next >= 0) {
      showRow(next);
    } else {
      updateStatus();
    }
    return;
  }
  // The first row the filter shows (the first row when it shows none: the status says so).
  showRow(std::max(0, findPosition(-1, +1, false, false)));
}

qint64 PairReviewView::currentRowIndex() const {
  return m_row ? m_row->row_index : -1;
}

int PairReviewView::leftSample() const {
  return m_leftCombo->currentIndex();
}

int PairReviewView::rightSample() const {
  return m_rightCombo->currentIndex();
}

void PairReviewView::setCompared(int leftSample, int rightSample) {
  m_leftCombo->setCurrentIndex(leftSample);
  m_rightCombo->setCurrentIndex(rightSample);
  showSamples();
}

void PairReviewView::showRow(int position) {
  if (position < 0 || position >= numRows()) return;
  const int64_t rowIndex = m_rowIndices[static_cast<size_t>(position)];
  m_requestedPosition = position;
  m_requestedRow = rowIndex;
  m_isReadingRow = true;
  const quint64 read = ++m_numRowReads;
  m_access->readRow(rowIndex, [this, read, rowIndex](const PairJobAccess::Row& row) {
    // Only the read asked for last is shown (J pressed twice reads two rows and shows the second).
    if (read != m_numRowReads) return;
    m_isReadingRow = false;
    if (!row.error.isEmpty()) {
      showMessage(row.error);
      return;
    }
    // Where the row is now: the rows may have been read again meanwhile.
    const auto it = std::find(m_rowIndices.begin(), m_rowIndices.end(), rowIndex);
    if (!row.row || it == m_rowIndices.end()) {
      m_requestedPosition = m_position;
      return;
    }
    m_row = row.row;
    m_pick = row.pick;
    displayRow(static_cast<int>(it - m_rowIndices.begin()));
  });
}

void PairReviewView::displayRow(int position) {
  m_position = m_requestedPosition = position;
  m_message->hide();
  m_review->show();
  m_prompt->setPlainText(QString::fromStdString(m_row->prompt));
  const int numSamples = static_cast<int>(m_row->samples.size());
  for (QComboBox* combo : {m_leftCombo, m_rightCombo}) {
    combo->clear();
    for (int i = 0; i < numSamples; ++i) combo->addItem(pairSampleName(i));
  }
  // A stored pick (or tie) shows its two samples, the lower index on the left; a row an undo went
  // back to shows the samples it compared; else, with n > 2, the judge's best and worst (with n = 2
  // the samples stay in order, so 1 is always sample 1), or the first two.
  int left = 0;
  int right = std::min(1, numSamples - 1);
  const SampleScores scores = scoresOf(*m_row);
  if (std::any_of(scores.begin(), scores.end(), [](const auto& score) { return score; }))
    m_scores[m_row->row_index] = scores;  // the filters go by what the row says now
  else
    m_scores.erase(m_row->row_index);
  if (m_restoreCompared && m_restoreCompared->rowIndex == m_row->row_index &&
      m_restoreCompared->leftSample < numSamples && m_restoreCompared->rightSample < numSamples) {
    left = m_restoreCompared->leftSample;
    right = m_restoreCompared->rightSample;
  } else if (m_pick && !m_pick->is_unusable && m_pick->chosen_sample_idx < numSamples &&
             m_pick->rejected_sample_idx < numSamples) {
    left = std::min(m_pick->chosen_sample_idx, m_pick->rejected_sample_idx);
    right = std::max(m_pick->chosen_sample_idx, m_pick->rejected_sample_idx);
  } else if (const auto bestAndWorst = judgeBestAndWorst(scores); bestAndWorst && numSamples > 2) {
    left = bestAndWorst->first;
    right = bestAndWorst->second;
  }
  m_restoreCompared.reset();
  m_leftCombo->setCurrentIndex(left);
  m_rightCombo->setCurrentIndex(right);
  showSamples();
}

void PairReviewView::showSamples() {
  if (!m_row) return;
  const auto textOf = [this](int sampleIdx) {
    if (sampleIdx < 0 || sampleIdx >= static_cast<int>(m_row->samples.size())) return QString();
    return QString::fromStdString(m_row->samples[static_cast<size_t>(sampleIdx)].output);
  };
  const QString left = textOf(leftSample());
  const QString right = textOf(rightSample());
  showWordDiff(m_leftText, left, m_rightText, right);
  const auto showReasoning = [this](ReasoningFold* fold, int sampleIdx) {
    const bool isSample = sampleIdx >= 0 && sampleIdx < static_cast<int>(m_row->samples.size());
    const SampleResult* sample =
        isSample ? &m_row->samples[static_cast<size_t>(sampleIdx)] : nullptr;
    const bool hasReasoning = sample && !sample->reasoning.empty();
    if (hasReasoning)
      fold->setReasoning(QString::fromStdString(sample->reasoning), sample->reasoning_tokens);
    fold->setVisible(hasReasoning);
    return hasReasoning;
  };
  const bool hasLeft = showReasoning(m_leftReasoning, leftSample());
  const bool hasRight = showReasoning(m_rightReasoning, rightSample());
  m_reasoningButton->setEnabled(hasLeft || hasRight);
  m_reasoningButton->setToolTip(
      hasLeft || hasRight
          ? tr("Show each side's reasoning above its answer (the pair compares the answers)")
          : tr("These samples have no reasoning"));
  updateStatus();
}

void PairReviewView::toggleReasoning() {
  if (m_reasoningButton->isEnabled()) setReasoningShown(!m_isReasoningShown);
}

void PairReviewView::setReasoningShown(bool isShown) {
  if (isShown == m_isReasoningShown) return;  // the button and the folds call back here
  m_isReasoningShown = isShown;
  m_reasoningButton->setChecked(isShown);
  m_reasoningButton->setText(isShown ? tr("Hide reasoning (R)") : tr("Show reasoning (R)"));
  m_leftReasoning->setExpanded(isShown);
  m_rightReasoning->setExpanded(isShown);
}

void PairReviewView::chooseLeft() {
  if (!m_row || leftSample() == rightSample()) return;
  decide(decisionOf(m_row->row_index, leftSample(), rightSample()), /*advance=*/true);
}

void PairReviewView::chooseRight() {
  if (!m_row || leftSample() == rightSample()) return;
  decide(decisionOf(m_row->row_index, rightSample(), leftSample()), /*advance=*/true);
}

void PairReviewView::markUnusable() {
  if (!m_row) return;
  decide(decisionOf(m_row->row_index, leftSample(), rightSample(), /*isUnusable=*/true),
         /*advance=*/true);
}

void PairReviewView::markTie() {
  if (!m_row || leftSample() == rightSample()) return;
  decide(decisionOf(m_row->row_index, leftSample(), rightSample(), false, /*isTie=*/true),
         /*advance=*/true);
}

void PairReviewView::acceptJudge() {
  const auto verdict = currentJudgeVerdict();
  if (!verdict) return;
  switch (verdict->choice) {
    case JudgeVerdict::Choice::Left:
      chooseLeft();
      break;
    case JudgeVerdict::Choice::Right:
      chooseRight();
      break;
    case JudgeVerdict::Choice::Tie:
      markTie();
      break;
  }
}

void PairReviewView::clearPick() {
  if (!m_row || !m_pick) return;
  decide(std::nullopt, /*advance=*/false);
}

void PairReviewView::decide(const std::optional<PairPick>& decision, bool advance) {
  // The row shown is not the one being read: a key now would decide the row being left.
  if (!m_row || m_isReadingRow) return;
  const int64_t rowIndex = m_row->row_index;
  m_undo.push_back({rowIndex, m_pick, leftSample(), rightSample()});
  if (m_undo.size() > kMaxUndoSteps) m_undo.erase(m_undo.begin());
  writeDecision(rowIndex, decision);
  m_lastAction =
      tr("Row %1: %2 (Ctrl+Z undoes).").arg(rowIndex).arg(describePairDecision(decision));
  if (advance) {
    advanceAfterDecision();
  } else {
    updateStatus();
  }
}

// The decision shows at once; its write runs before any read asked for later, and a failure
// replaces the status line with its error.
void PairReviewView::writeDecision(int64_t rowIndex, const std::optional<PairPick>& decision) {
  ++m_numPickWrites;
  const auto failed = [this](const QString& error) { m_status->setText(error); };
  if (decision) {
    m_access->setPick(*decision, failed);
    m_decisions[rowIndex] = *decision;
  } else {
    m_access->clearPick(rowIndex, failed);
    m_decisions.erase(rowIndex);
  }
  if (m_row && m_row->row_index == rowIndex) m_pick = decision;
}

// The next row nobody reviewed, after this one and then from the top; under the Reviewed and
// Ties filters (which show no unreviewed rows) the next row the filter shows. None: stays.
void PairReviewView::advanceAfterDecision() {
  const bool showsUnreviewed = filter() == RowFilter::All || filter() == RowFilter::Unreviewed;
  const int next = findPosition(m_position, +1, showsUnreviewed, /*isWrapping=*/true);
  if (next >= 0) {
    showRow(next);
  } else {
    updateStatus();
  }
}

void PairReviewView::undo() {
  if (m_undo.empty()) return;
  const UndoStep step = m_undo.back();
  m_undo.pop_back();
  writeDecision(step.rowIndex, step.before);
  m_lastAction =
      tr("Undone: row %1 is %2 again.").arg(step.rowIndex).arg(describePairDecision(step.before));
  const auto it = std::find(m_rowIndices.begin(), m_rowIndices.end(), step.rowIndex);
  if (m_row && m_row->row_index == step.rowIndex && !m_isReadingRow) {
    setCompared(step.leftSample, step.rightSample);
    return;
  }
  if (it == m_rowIndices.end()) {
    updateStatus();
    return;
  }
  m_restoreCompared = step;
  showRow(static_cast<int>(it - m_rowIndices.begin()));
}

void PairReviewView::nextRow() {
  const int from = m_requestedPosition >= 0 ? m_requestedPosition : m_position;
  const int next = findPosition(from, +1, false, false);
  if (next < 0) {
    reloadRows(/*advance=*/true);  // rows may have finished since
    return;
  }
  showRow(next);
}

void PairReviewView::previousRow() {
  const int from = m_requestedPosition >= 0 ? m_requestedPosition : m_position;
  const int previous = findPosition(from, -1, false, false);
  if (previous >= 0) showRow(previous);
}

void PairReviewView::showMessage(const QString& message) {
  m_row.reset();
  m_pick.reset();
  m_position = m_requestedPosition = -1;
  m_isReadingRow = false;
  ++m_numRowReads;  // a row still being read is not shown over the message
  m_message->setText(message);
  m_review->hide();
  m_message->show();
}

}  // namespace sluice::ui
