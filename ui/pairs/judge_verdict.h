// What the judge said about a row's samples, as the Pairs tab shows it and filters by it. The
// judge step writes each sample's SampleResult::extra as
//   {"score": 4.5, "judge": {"rubric": "ultrafeedback", "ratings": [4, 5], "rationales": [...]}}
// where score is the mean of the k ratings: 1-5 for a rating rubric ("ultrafeedback"), or, for
// "pairwise", the sample's win rate 0..1 (ratings 0 / 0.5 / 1 per comparison). A sample without
// a numeric score was not judged. The judge prefers the higher score; equal scores are a tie.
// A human decision (PairPick) wins over the judge's in the export; this file only compares them.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/jobs/pair_pick.h"
#include "engine/jobs/row_result.h"

namespace sluice::ui {

// One sample's judgement; score unset when the sample was not judged.
struct SampleJudgement {
  std::optional<double> score;
  std::string rubric;
  std::vector<double> ratings;  // the k ratings (or, pairwise, the comparisons' 0 / 0.5 / 1)
  std::vector<std::string> rationales;
};

// Reads sample.extra; anything missing or of another type is left unset (never throws).
SampleJudgement judgementOf(const SampleResult& sample);

// The scale a rubric's scores are on.
enum class JudgeScale { Rating, WinRate };
// "pairwise" scores are win rates; every other rubric (and none) rates 1-5.
JudgeScale judgeScaleOf(std::string_view rubric);

// Two compared samples' scores differ by less than a quarter of their scale's span: 1.0 on
// ratings 1-5, 0.25 on win rates 0..1. One constant for both scales, so "small" means the same
// share of the scale whichever rubric judged.
constexpr double kSmallMarginShareOfScale = 0.25;
// The margin below which two scores count as close on scale.
double smallMargin(JudgeScale scale);

// The judge's verdict on two samples shown left and right.
struct JudgeVerdict {
  enum class Choice { Left, Right, Tie };
  Choice choice = Choice::Tie;
  double leftScore = 0.0;
  double rightScore = 0.0;
};
// nullopt unless both samples have a score.
std::optional<JudgeVerdict> judgeVerdict(std::optional<double> left, std::optional<double> right);

// scores[i] is sample i's score (a missing entry: not judged).
using SampleScores = std::vector<std::optional<double>>;
std::optional<double> scoreOf(const SampleScores& scores, int sampleIdx);
SampleScores scoresOf(const RowResult& row);

// The judge's best and worst samples (the highest and lowest score; the lower index on equal
// scores for the best, the higher for the worst), nullopt with fewer than two scored samples.
std::optional<std::pair<int, int>> judgeBestAndWorst(const SampleScores& scores);

// The two samples a row compares: its decision's (unless unusable), else the judge's best and
// worst; nullopt when neither names two.
std::optional<std::pair<int, int>> comparedSamples(const std::optional<PairPick>& decision,
                                                   const SampleScores& scores);

// True when the compared samples' scores differ by less than smallMargin(scale).
bool isSmallMargin(const std::optional<PairPick>& decision, const SampleScores& scores,
                   JudgeScale scale);

// True when a person's decision disagrees with the judge's scores of the two samples it names:
// the chosen sample scored lower than the rejected, or a tie where the scores differ, or a
// choice where they are equal. Unusable marks and unscored samples never disagree.
bool disagreesWithJudge(const PairPick& decision, const SampleScores& scores);

}  // namespace sluice::ui
