// PairReviewView's judge part: each side's score and rationale (JudgeNote) and the judge's
// verdict on the two samples shown, the decision pre-filled for a person to confirm or overrule
// (pair_review_view.h, judge_verdict.h).
#include <QComboBox>
#include <QLabel>

#include "ui/pairs/judge_note.h"
#include "ui/pairs/pair_colors.h"
#include "ui/pairs/pair_review_view.h"

namespace sluice::ui {
namespace {

// 4.5 -> "4.5", 2 -> "2.0" on ratings; 0.75 -> "0.75" on win rates: the same digits for both
// sides, so "4.5 vs 2.0" lines up.
QString judgeScoreText(double score, JudgeScale scale) {
  return QString::number(score, 'f', scale == JudgeScale::WinRate ? 2 : 1);
}

QString judgeRatingText(double rating) {
  return QString::number(rating, 'g', 3);
}

// A side's note: "Judge 4.5 of 5 · ratings 4, 5" (or "Judge: win rate 0.75 · 1, 0.5") then each
// rationale on its own line.
QString judgeNoteText(const SampleJudgement& judgement, JudgeScale scale) {
  QStringList ratings;
  for (const double rating : judgement.ratings) ratings << judgeRatingText(rating);
  QString head =
      scale == JudgeScale::WinRate
          ? PairReviewView::tr("Judge: win rate %1").arg(judgeScoreText(*judgement.score, scale))
          : PairReviewView::tr("Judge: %1 of 5").arg(judgeScoreText(*judgement.score, scale));
  if (ratings.size() > 1) {
    head += scale == JudgeScale::WinRate
                ? PairReviewView::tr(" · comparisons %1").arg(ratings.join(QStringLiteral(", ")))
                : PairReviewView::tr(" · ratings %1").arg(ratings.join(QStringLiteral(", ")));
  }
  QStringList lines{head};
  for (const std::string& rationale : judgement.rationales) {
    const QString text = QString::fromStdString(rationale).simplified();
    if (!text.isEmpty()) lines << text;
  }
  return lines.join('\n');
}

}  // namespace

std::optional<JudgeVerdict> PairReviewView::currentJudgeVerdict() const {
  if (!m_row || leftSample() == rightSample()) return std::nullopt;
  const SampleScores scores = scoresOf(*m_row);
  return judgeVerdict(scoreOf(scores, leftSample()), scoreOf(scores, rightSample()));
}

void PairReviewView::updateJudge() {
  if (!m_row) return;
  const auto verdict = currentJudgeVerdict();
  const auto showNote = [&](JudgeNote* note, int sampleIdx, bool isPreferred) {
    const bool isSample = sampleIdx >= 0 && sampleIdx < static_cast<int>(m_row->samples.size());
    const SampleJudgement judgement =
        isSample ? judgementOf(m_row->samples[static_cast<size_t>(sampleIdx)]) : SampleJudgement{};
    if (!judgement.score) {
      note->hide();
      return;
    }
    const QString text = judgeNoteText(judgement, judgeScaleOf(judgement.rubric));
    if (text != note->note()) note->setNote(text);
    // The side the judge prefers reads in the chosen colour, as a pre-filled verdict; the colour
    // comes from the view, whose palette follows the application (a label with a style sheet
    // keeps the palette it had).
    note->setStyleSheet(
        isPreferred ? QStringLiteral("color: %1;").arg(pair_colors::chosen(palette()).name())
                    : QString());
    note->show();
  };
  showNote(m_leftJudge, leftSample(), verdict && verdict->choice == JudgeVerdict::Choice::Left);
  showNote(m_rightJudge, rightSample(), verdict && verdict->choice == JudgeVerdict::Choice::Right);
  if (!verdict) {
    m_judgeLine->hide();
    return;
  }
  const QString scoresText = tr("%1 vs %2")
                                 .arg(judgeScoreText(verdict->leftScore, m_judgeScale),
                                      judgeScoreText(verdict->rightScore, m_judgeScale));
  const QString said = verdict->choice == JudgeVerdict::Choice::Left    ? tr("left")
                       : verdict->choice == JudgeVerdict::Choice::Right ? tr("right")
                                                                        : tr("a tie");
  QString text = tr("Judge: %1 (%2)").arg(said, scoresText);
  if (!m_pick) {
    text += tr(" — Enter accepts it; 1 / 2 / T / D overrule it.");
  } else if (m_pick->is_unusable) {
    text += tr(" — you discarded the row.");
  } else {
    // The decision's samples may not be the two shown (n > 2): judge it on its own two.
    const bool disagrees = disagreesWithJudge(*m_pick, scoresOf(*m_row));
    text += disagrees ? tr(" — your decision differs; it wins in the export.")
                      : tr(" — your decision agrees.");
  }
  m_judgeLine->setText(text);
  m_judgeLine->show();
}

}  // namespace sluice::ui
