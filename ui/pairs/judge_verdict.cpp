#include "ui/pairs/judge_verdict.h"

#include <cmath>

namespace sluice::ui {
namespace {

std::optional<double> numberAt(const nlohmann::ordered_json& object, const char* key) {
  if (!object.is_object()) return std::nullopt;
  const auto it = object.find(key);
  if (it == object.end() || !it->is_number()) return std::nullopt;
  const double value = it->get<double>();
  return std::isnan(value) ? std::nullopt : std::optional<double>(value);
}

}  // namespace

SampleJudgement judgementOf(const SampleResult& sample) {
  SampleJudgement judgement;
  judgement.score = numberAt(sample.extra, "score");
  if (!sample.extra.is_object()) return judgement;
  const auto judge = sample.extra.find("judge");
  if (judge == sample.extra.end() || !judge->is_object()) return judgement;
  if (const auto rubric = judge->find("rubric"); rubric != judge->end() && rubric->is_string())
    judgement.rubric = rubric->get<std::string>();
  if (const auto ratings = judge->find("ratings"); ratings != judge->end() && ratings->is_array()) {
    for (const auto& rating : *ratings) {
      if (rating.is_number()) judgement.ratings.push_back(rating.get<double>());
    }
  }
  if (const auto rationales = judge->find("rationales");
      rationales != judge->end() && rationales->is_array()) {
    for (const auto& rationale : *rationales) {
      if (rationale.is_string()) judgement.rationales.push_back(rationale.get<std::string>());
    }
  }
  return judgement;
}

JudgeScale judgeScaleOf(std::string_view rubric) {
  return rubric == "pairwise" ? JudgeScale::WinRate : JudgeScale::Rating;
}

double smallMargin(JudgeScale scale) {
  const double span = scale == JudgeScale::WinRate ? 1.0 : 4.0;  // 0..1, or 1..5
  return kSmallMarginShareOfScale * span;
}

std::optional<JudgeVerdict> judgeVerdict(std::optional<double> left, std::optional<double> right) {
  if (!left || !right) return std::nullopt;
  JudgeVerdict verdict;
  verdict.leftScore = *left;
  verdict.rightScore = *right;
  verdict.choice = *left > *right   ? JudgeVerdict::Choice::Left
                   : *right > *left ? JudgeVerdict::Choice::Right
                                    : JudgeVerdict::Choice::Tie;
  return verdict;
}

std::optional<double> scoreOf(const SampleScores& scores, int sampleIdx) {
  if (sampleIdx < 0 || static_cast<size_t>(sampleIdx) >= scores.size()) return std::nullopt;
  return scores[static_cast<size_t>(sampleIdx)];
}

SampleScores scoresOf(const RowResult& row) {
  SampleScores scores;
  scores.reserve(row.samples.size());
  for (const SampleResult& sample : row.samples) scores.push_back(judgementOf(sample).score);
  return scores;
}

std::optional<std::pair<int, int>> judgeBestAndWorst(const SampleScores& scores) {
  int best = -1;
  int worst = -1;
  int numScored = 0;
  for (int i = 0; i < static_cast<int>(scores.size()); ++i) {
    const auto score = scores[static_cast<size_t>(i)];
    if (!score) continue;
    ++numScored;
    if (best < 0 || *score > *scores[static_cast<size_t>(best)]) best = i;
    if (worst < 0 || *score <= *scores[static_cast<size_t>(worst)]) worst = i;
  }
  if (numScored < 2) return std::nullopt;
  // All equal: best is the first scored sample and worst the last, still two samples.
  return std::pair{best, worst};
}

std::optional<std::pair<int, int>> comparedSamples(const std::optional<PairPick>& decision,
                                                   const SampleScores& scores) {
  if (decision && !decision->is_unusable)
    return std::pair{decision->chosen_sample_idx, decision->rejected_sample_idx};
  return judgeBestAndWorst(scores);
}

bool isSmallMargin(const std::optional<PairPick>& decision, const SampleScores& scores,
                   JudgeScale scale) {
  const auto compared = comparedSamples(decision, scores);
  if (!compared) return false;
  const auto verdict =
      judgeVerdict(scoreOf(scores, compared->first), scoreOf(scores, compared->second));
  return verdict && std::abs(verdict->leftScore - verdict->rightScore) < smallMargin(scale);
}

bool disagreesWithJudge(const PairPick& decision, const SampleScores& scores) {
  if (decision.is_unusable) return false;
  const auto verdict = judgeVerdict(scoreOf(scores, decision.chosen_sample_idx),
                                    scoreOf(scores, decision.rejected_sample_idx));
  if (!verdict) return false;
  const bool judgeTies = verdict->choice == JudgeVerdict::Choice::Tie;
  if (decision.is_tie) return !judgeTies;
  // Left is the chosen sample here: the judge agrees only when it prefers it.
  return verdict->choice != JudgeVerdict::Choice::Left;
}

}  // namespace sluice::ui
