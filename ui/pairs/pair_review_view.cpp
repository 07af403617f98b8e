#include "ui/pairs/pair_review_view.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QShortcut>
#include <QSplitter>
#include <QVBoxLayout>
#include <algorithm>

#include "ui/common/number_format.h"
#include "ui/common/reasoning_fold.h"
#include "ui/pairs/pair_job_access.h"
#include "ui/pairs/word_diff.h"

namespace sluice::ui {
namespace {

QString sampleName(int sampleIdx) {
  return PairReviewView::tr("sample %1").arg(sampleIdx + 1);
}

QPlainTextEdit* readOnlyText(QWidget* parent) {
  auto* text = new QPlainTextEdit(parent);
  text->setReadOnly(true);
  // Mouse selection only: keys go to the view's shortcuts, not to the text.
  text->setTextInteractionFlags(Qt::TextSelectableByMouse);
  return text;
}

}  // namespace

PairReviewView::PairReviewView(QWidget* parent)
    : QWidget(parent), m_access(new PairJobAccess(this)) {
  buildUi();
  addShortcut(Qt::Key_1, &PairReviewView::chooseLeft);
  addShortcut(Qt::Key_2, &PairReviewView::chooseRight);
  addShortcut(Qt::Key_X, &PairReviewView::markUnusable);
  addShortcut(Qt::Key_J, &PairReviewView::nextRow);
  addShortcut(Qt::Key_K, &PairReviewView::previousRow);
  addShortcut(Qt::Key_R, &PairReviewView::toggleReasoning);
  showMessage(tr("Open or run a job with n ≥ 2 samples per prompt to review its pairs."));
}

PairReviewView::~PairReviewView() = default;

void PairReviewView::buildUi() {
  m_message = new QLabel(this);
  m_message->setWordWrap(true);
  m_message->setAlignment(Qt::AlignCenter);
  m_message->setTextFormat(Qt::PlainText);

  m_review = new QWidget(this);
  m_rowLabel = new QLabel(m_review);
  m_rowLabel->setTextFormat(Qt::PlainText);
  auto* previous = new QPushButton(tr("◀ Previous (K)"), m_review);
  auto* next = new QPushButton(tr("Next (J) ▶"), m_review);
  connect(previous, &QPushButton::clicked, this, &PairReviewView::previousRow);
  connect(next, &QPushButton::clicked, this, &PairReviewView::nextRow);
  m_reasoningButton = new QPushButton(tr("Show reasoning (R)"), m_review);
  m_reasoningButton->setCheckable(true);
  m_reasoningButton->setEnabled(false);  // until a sample with reasoning is shown
  connect(m_reasoningButton, &QPushButton::toggled, this, &PairReviewView::setReasoningShown);
  auto* top = new QHBoxLayout;
  top->addWidget(m_rowLabel, 1);
  top->addWidget(m_reasoningButton);
  top->addWidget(previous);
  top->addWidget(next);

  m_prompt = readOnlyText(m_review);
  m_prompt->setPlaceholderText(tr("Prompt"));
  const auto sampleColumn = [this](QComboBox*& combo, ReasoningFold*& reasoning,
                                   QPlainTextEdit*& text, QLabel*& verdict, const QString& key) {
    auto* column = new QWidget(m_review);
    combo = new QComboBox(column);
    combo->setToolTip(tr("Which sample this side shows"));
    verdict = new QLabel(column);
    verdict->setTextFormat(Qt::PlainText);
    auto* header = new QHBoxLayout;
    header->addWidget(new QLabel(key, column));
    header->addWidget(combo);
    header->addWidget(verdict, 1);
    reasoning = new ReasoningFold(column);
    reasoning->textView()->setTextInteractionFlags(Qt::TextSelectableByMouse);
    reasoning->hide();
    text = readOnlyText(column);
    auto* layout = new QVBoxLayout(column);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(header);
    layout->addWidget(reasoning);
    layout->addWidget(text, 1);
    connect(combo, &QComboBox::activated, this, [this] { showSamples(); });
    // Either side's header opens both: the two reasonings are read side by side.
    connect(reasoning, &ReasoningFold::expandedChanged, this, &PairReviewView::setReasoningShown);
    connect(reasoning, &ReasoningFold::expandedChanged, column,
            [layout, reasoning](bool isExpanded) {
              layout->setStretchFactor(reasoning, isExpanded ? 1 : 0);
            });
    return column;
  };
  auto* samples = new QSplitter(Qt::Horizontal, m_review);
  samples->addWidget(
      sampleColumn(m_leftCombo, m_leftReasoning, m_leftText, m_leftVerdict, tr("Left (1):")));
  samples->addWidget(
      sampleColumn(m_rightCombo, m_rightReasoning, m_rightText, m_rightVerdict, tr("Right (2):")));
  auto* texts = new QSplitter(Qt::Vertical, m_review);
  texts->addWidget(m_prompt);
  texts->addWidget(samples);
  texts->setStretchFactor(0, 1);
  texts->setStretchFactor(1, 4);

  auto* left = new QPushButton(tr("Left is chosen (1)"), m_review);
  auto* right = new QPushButton(tr("Right is chosen (2)"), m_review);
  auto* unusable = new QPushButton(tr("Unusable (X)"), m_review);
  auto* clear = new QPushButton(tr("Clear pick"), m_review);
  unusable->setToolTip(tr("Leave this row out of the DPO export"));
  clear->setToolTip(tr("Let the export's automatic rule pick this row's pair"));
  connect(left, &QPushButton::clicked, this, &PairReviewView::chooseLeft);
  connect(right, &QPushButton::clicked, this, &PairReviewView::chooseRight);
  connect(unusable, &QPushButton::clicked, this, &PairReviewView::markUnusable);
  connect(clear, &QPushButton::clicked, this, &PairReviewView::clearPick);
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(left);
  buttons->addWidget(right);
  buttons->addWidget(unusable);
  buttons->addWidget(clear);
  buttons->addStretch(1);

  m_status = new QLabel(m_review);
  m_status->setTextFormat(Qt::PlainText);
  m_status->setWordWrap(true);

  auto* reviewLayout = new QVBoxLayout(m_review);
  reviewLayout->addLayout(top);
  reviewLayout->addWidget(texts, 1);
  reviewLayout->addLayout(buttons);
  reviewLayout->addWidget(m_status);

  auto* layout = new QVBoxLayout(this);
  layout->addWidget(m_message, 1);
  layout->addWidget(m_review, 1);
}

void PairReviewView::addShortcut(Qt::Key key, void (PairReviewView::*slot)()) {
  auto* shortcut = new QShortcut(QKeySequence(key), this);
  // Only while this tab (or a child, the texts and combos included) has the focus.
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
  if (m_isJobOpen) reloadRows();  // rows finished while another tab was shown
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
        // A pick made after this read was asked for is counted already, and not in what it read.
        const int numPicked = numPickWrites == m_numPickWrites ? rows.numPicked : m_numPicked;
        applyRows(rows.rowIndices, rows.numSamplesAsked, numPicked, advance);
      });
}

void PairReviewView::applyRows(const std::vector<int64_t>& rowIndices, int numSamplesAsked,
                               int numPicked, bool advance) {
  m_numSamplesAsked = numSamplesAsked;
  if (m_numSamplesAsked == 1) {
    showMessage(tr("This job asks for n = %1 sample per prompt: a pair needs n ≥ 2. Set "
                   "\"Samples per prompt\" to 2 or more for a job whose pairs you want to review.")
                    .arg(m_numSamplesAsked));
    return;
  }
  const qint64 shownRow = currentRowIndex();
  m_rowIndices = rowIndices;
  m_numPicked = numPicked;
  if (m_rowIndices.empty()) {
    showMessage(tr("No finished rows yet: pairs appear here as rows finish."));
    return;
  }
  const auto it = std::find(m_rowIndices.begin(), m_rowIndices.end(), shownRow);
  if (it != m_rowIndices.end() && m_row) {
    m_position = m_requestedPosition = static_cast<int>(it - m_rowIndices.begin());
    if (advance && m_position + 1 < numRows()) {
      showRow(m_position + 1);
    } else {
      updateStatus();
    }
    return;
  }
  showRow(0);
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
  m_access->readRow(rowIndex, [this, position, rowIndex](const PairJobAccess::Row& read) {
    // Only the row last asked for is shown (J pressed twice reads two rows and shows the second).
    if (position != m_requestedPosition) return;
    if (!read.error.isEmpty()) {
      showMessage(read.error);
      return;
    }
    if (!read.row || position >= numRows() ||
        m_rowIndices[static_cast<size_t>(position)] != rowIndex) {
      m_requestedPosition = m_position;
      return;
    }
    m_row = read.row;
    m_pick = read.pick;
    displayRow(position);
  });
}

void PairReviewView::displayRow(int position) {
  m_position = position;
  m_message->hide();
  m_review->show();
  m_prompt->setPlainText(QString::fromStdString(m_row->prompt));
  const int numSamples = static_cast<int>(m_row->samples.size());
  for (QComboBox* combo : {m_leftCombo, m_rightCombo}) {
    combo->clear();
    for (int i = 0; i < numSamples; ++i) combo->addItem(sampleName(i));
  }
  // A stored pick shows its two samples, the lower index on the left.
  int left = 0;
  int right = std::min(1, numSamples - 1);
  if (m_pick && !m_pick->is_unusable && m_pick->chosen_sample_idx < numSamples &&
      m_pick->rejected_sample_idx < numSamples) {
    left = std::min(m_pick->chosen_sample_idx, m_pick->rejected_sample_idx);
    right = std::max(m_pick->chosen_sample_idx, m_pick->rejected_sample_idx);
  }
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
  storePick({m_row->row_index, leftSample(), rightSample(), false});
}

void PairReviewView::chooseRight() {
  if (!m_row || leftSample() == rightSample()) return;
  storePick({m_row->row_index, rightSample(), leftSample(), false});
}

void PairReviewView::markUnusable() {
  if (!m_row) return;
  storePick({m_row->row_index, leftSample(), rightSample(), true});
}

void PairReviewView::clearPick() {
  if (!m_row || !m_pick) return;
  ++m_numPickWrites;
  m_access->clearPick(m_row->row_index, [this](const QString& error) { m_status->setText(error); });
  m_numPicked = std::max(0, m_numPicked - 1);
  m_pick.reset();
  updateStatus();
}

// The pick shows at once; its write runs before any read asked for later, and a failure replaces
// the status line with its error.
void PairReviewView::storePick(const PairPick& pick) {
  ++m_numPickWrites;
  m_access->setPick(pick, [this](const QString& error) { m_status->setText(error); });
  if (!m_pick) m_numPicked++;
  m_pick = pick;
  updateStatus();
}

void PairReviewView::nextRow() {
  const int from = m_requestedPosition >= 0 ? m_requestedPosition : m_position;
  if (from + 1 >= numRows()) {
    reloadRows(/*advance=*/true);  // rows may have finished since
    return;
  }
  showRow(from + 1);
}

void PairReviewView::previousRow() {
  const int from = m_requestedPosition >= 0 ? m_requestedPosition : m_position;
  if (from > 0) showRow(from - 1);
}

QString PairReviewView::statusText() const {
  return m_status->text();
}

QString PairReviewView::messageText() const {
  return m_review->isHidden() ? m_message->text() : QString();
}

void PairReviewView::updateStatus() {
  if (!m_row) return;
  m_rowLabel->setText(tr("Row %1 · %2 of %3 finished rows")
                          .arg(m_row->row_index)
                          .arg(formatCount(m_position + 1), formatCount(numRows())));
  const auto sampleInfo = [this](int sampleIdx) {
    if (sampleIdx < 0 || sampleIdx >= static_cast<int>(m_row->samples.size())) return QString();
    const SampleResult& sample = m_row->samples[static_cast<size_t>(sampleIdx)];
    const QString finish = QString::fromStdString(sample.finish_reason);
    if (sample.reasoning_tokens > 0) {
      return tr("%1 tokens (%2 reasoning), %3")
          .arg(sample.output_tokens)
          .arg(sample.reasoning_tokens)
          .arg(finish);
    }
    return tr("%1 tokens, %2").arg(sample.output_tokens).arg(finish);
  };
  const auto verdictOf = [this](int sampleIdx) {
    if (!m_pick) return QString();
    if (m_pick->is_unusable) return tr("unusable");
    if (m_pick->chosen_sample_idx == sampleIdx) return tr("CHOSEN");
    if (m_pick->rejected_sample_idx == sampleIdx) return tr("rejected");
    return QString();
  };
  const auto setVerdict = [&](QLabel* label, int sampleIdx) {
    const QString verdict = verdictOf(sampleIdx);
    const QString info = sampleInfo(sampleIdx);
    label->setText(verdict.isEmpty() ? info : tr("%1 · %2").arg(verdict, info));
    // The same green and red as the word marks: chosen reads as the kept side.
    const bool isChosen = m_pick && !m_pick->is_unusable && m_pick->chosen_sample_idx == sampleIdx;
    const bool isRejected =
        m_pick && !m_pick->is_unusable && m_pick->rejected_sample_idx == sampleIdx;
    label->setStyleSheet(isChosen     ? QStringLiteral("color: #2e7d32; font-weight: bold;")
                         : isRejected ? QStringLiteral("color: #c62828;")
                                      : QString());
  };
  setVerdict(m_leftVerdict, leftSample());
  setVerdict(m_rightVerdict, rightSample());

  QString pickText;
  if (!m_pick) {
    pickText = tr("Not picked: the DPO export uses its automatic rule for this row.");
  } else if (m_pick->is_unusable) {
    pickText = tr("Marked unusable: the DPO export leaves this row out.");
  } else {
    pickText =
        tr("Picked: %1 chosen, %2 rejected.")
            .arg(sampleName(m_pick->chosen_sample_idx), sampleName(m_pick->rejected_sample_idx));
  }
  QString sameSample;
  if (m_row->samples.size() < 2)
    sameSample = tr(" This row has fewer than two samples: there is no pair to pick.");
  else if (leftSample() == rightSample())
    sameSample = tr(" Both sides show the same sample: choose two to compare.");
  m_status->setText(
      tr("%1%2 %3 of %4 rows reviewed.")
          .arg(pickText, sameSample, formatCount(m_numPicked), formatCount(numRows())));
}

void PairReviewView::showMessage(const QString& message) {
  m_row.reset();
  m_pick.reset();
  m_position = m_requestedPosition = -1;
  m_message->setText(message);
  m_review->hide();
  m_message->show();
}

}  // namespace sluice::ui
