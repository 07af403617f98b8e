// PairReviewView's widgets and their layout: the row line and filter, the prompt over the two
// sides (each: its sample combo and verdict, the judge's note, the reasoning fold, the answer),
// the judge's verdict line, the decision buttons and the status line (pair_review_view.h).
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSplitter>
#include <QVBoxLayout>

#include "ui/common/reasoning_fold.h"
#include "ui/pairs/judge_note.h"
#include "ui/pairs/judge_verdict.h"
#include "ui/pairs/pair_review_view.h"

namespace sluice::ui {
namespace {

QPlainTextEdit* pairReadOnlyText(QWidget* parent) {
  auto* text = new QPlainTextEdit(parent);
  text->setReadOnly(true);
  // Mouse selection only: keys go to the view's shortcuts, not to the text.
  text->setTextInteractionFlags(Qt::TextSelectableByMouse);
  return text;
}

}  // namespace

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
  m_filter = new QComboBox(m_review);
  m_filter->setObjectName(QStringLiteral("pairFilter"));
  m_filter->setToolTip(tr("Which rows J and K walk through"));
  // Its texts (with counts) come once the rows are read, after it was first shown: it follows
  // them, else it keeps the width of the empty texts it was shown with.
  m_filter->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  // The texts carry counts (updateStatus); the data is the RowFilter.
  for (const RowFilter filter : {RowFilter::All, RowFilter::Unreviewed, RowFilter::Reviewed,
                                 RowFilter::Ties, RowFilter::Disagree, RowFilter::SmallMargin})
    m_filter->addItem(QString(), static_cast<int>(filter));
  m_filter->setItemData(
      m_filter->findData(static_cast<int>(RowFilter::Disagree)),
      tr("Rows whose decision differs from the judge's: the chosen sample scored lower, or a tie "
         "where the scores differ (or a choice where they are equal)"),
      Qt::ToolTipRole);
  m_filter->setItemData(m_filter->findData(static_cast<int>(RowFilter::SmallMargin)),
                        tr("Rows whose two compared samples' judge scores differ by less than "
                           "%1 (ratings 1-5) or %2 (win rates)")
                            .arg(smallMargin(JudgeScale::Rating))
                            .arg(smallMargin(JudgeScale::WinRate)),
                        Qt::ToolTipRole);
  connect(m_filter, &QComboBox::currentIndexChanged, this, [this] { applyFilter(); });
  auto* top = new QHBoxLayout;
  top->addWidget(m_rowLabel, 1);
  top->addWidget(m_filter);
  top->addWidget(m_reasoningButton);
  top->addWidget(previous);
  top->addWidget(next);

  m_prompt = pairReadOnlyText(m_review);
  m_prompt->setPlaceholderText(tr("Prompt"));
  const auto sampleColumn = [this](QComboBox*& combo, ReasoningFold*& reasoning,
                                   QPlainTextEdit*& text, QLabel*& verdict, JudgeNote*& judge,
                                   const QString& key) {
    auto* column = new QWidget(m_review);
    combo = new QComboBox(column);
    combo->setToolTip(tr("Which sample this side shows"));
    verdict = new QLabel(column);
    verdict->setTextFormat(Qt::PlainText);
    auto* header = new QHBoxLayout;
    header->addWidget(new QLabel(key, column));
    header->addWidget(combo);
    header->addWidget(verdict, 1);
    judge = new JudgeNote(column);
    judge->hide();
    reasoning = new ReasoningFold(column);
    reasoning->textView()->setTextInteractionFlags(Qt::TextSelectableByMouse);
    reasoning->hide();
    text = pairReadOnlyText(column);
    auto* layout = new QVBoxLayout(column);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(header);
    layout->addWidget(judge);
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
  samples->addWidget(sampleColumn(m_leftCombo, m_leftReasoning, m_leftText, m_leftVerdict,
                                  m_leftJudge, tr("Left (1):")));
  samples->addWidget(sampleColumn(m_rightCombo, m_rightReasoning, m_rightText, m_rightVerdict,
                                  m_rightJudge, tr("Right (2):")));
  auto* texts = new QSplitter(Qt::Vertical, m_review);
  texts->addWidget(m_prompt);
  texts->addWidget(samples);
  texts->setStretchFactor(0, 1);
  texts->setStretchFactor(1, 4);

  auto* left = new QPushButton(tr("Left is chosen (1)"), m_review);
  auto* right = new QPushButton(tr("Right is chosen (2)"), m_review);
  auto* tie = new QPushButton(tr("Tie (T)"), m_review);
  auto* unusable = new QPushButton(tr("Discard (D)"), m_review);
  auto* clear = new QPushButton(tr("Clear pick"), m_review);
  auto* undoButton = new QPushButton(tr("Undo (Ctrl+Z)"), m_review);
  tie->setToolTip(tr("Both samples are equally good: no preference, left out of the DPO export"));
  unusable->setToolTip(tr("Unusable: leave this row out of the DPO export (D or X)"));
  undoButton->setToolTip(tr("Take back the last pick, tie or unusable mark"));
  clear->setToolTip(tr("Let the export's automatic rule pick this row's pair"));
  connect(left, &QPushButton::clicked, this, &PairReviewView::chooseLeft);
  connect(right, &QPushButton::clicked, this, &PairReviewView::chooseRight);
  connect(tie, &QPushButton::clicked, this, &PairReviewView::markTie);
  connect(unusable, &QPushButton::clicked, this, &PairReviewView::markUnusable);
  connect(clear, &QPushButton::clicked, this, &PairReviewView::clearPick);
  connect(undoButton, &QPushButton::clicked, this, &PairReviewView::undo);
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(left);
  buttons->addWidget(right);
  buttons->addWidget(tie);
  buttons->addWidget(unusable);
  buttons->addWidget(clear);
  buttons->addStretch(1);
  buttons->addWidget(undoButton);

  // The judge's verdict, the decision pre-filled for a person to confirm (Enter) or overrule.
  m_judgeLine = new QLabel(m_review);
  m_judgeLine->setObjectName(QStringLiteral("judgeVerdict"));
  m_judgeLine->setTextFormat(Qt::PlainText);
  m_judgeLine->setWordWrap(true);
  QFont judgeFont = m_judgeLine->font();
  judgeFont.setBold(true);
  m_judgeLine->setFont(judgeFont);
  m_judgeLine->hide();

  m_status = new QLabel(m_review);
  m_status->setTextFormat(Qt::PlainText);
  m_status->setWordWrap(true);

  auto* reviewLayout = new QVBoxLayout(m_review);
  reviewLayout->addLayout(top);
  reviewLayout->addWidget(texts, 1);
  reviewLayout->addWidget(m_judgeLine);
  reviewLayout->addLayout(buttons);
  reviewLayout->addWidget(m_status);

  auto* layout = new QVBoxLayout(this);
  layout->addWidget(m_message, 1);
  layout->addWidget(m_review, 1);
}

}  // namespace sluice::ui
