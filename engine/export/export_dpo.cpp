#include "engine/export/export_dpo.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <vector>

#include "engine/core/error.h"
#include "engine/export/export_output.h"
#include "engine/export/export_rows.h"
#include "engine/jobs/job_store.h"
#include "engine/jobs/pair_pick.h"
#include "engine/jobs/row_codec.h"

namespace sluice {
namespace {

using Json = nlohmann::ordered_json;

// Characters, not bytes, so that a reply in a non-Latin script is not "longer" for its encoding.
size_t num_code_points(const std::string& text) {
  return static_cast<size_t>(std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xc0) != 0x80;
  }));
}

// Returns the score of sample sample_idx, or nullopt when it has none.
std::optional<double> sample_score(const RowResult& row, size_t sample_idx,
                                   const ExportOptions& options) {
  const Json& extra = row.samples[sample_idx].extra;
  if (!extra.is_object()) return std::nullopt;
  const auto it = extra.find(options.score_field);
  if (it == extra.end() || it->is_null()) return std::nullopt;
  if (!it->is_number()) {
    fail("row ", row.row_index, ", sample ", sample_idx, ": extra.", options.score_field, " is ",
         it->type_name(), ", not a number");
  }
  const double score = it->get<double>();
  // NaN would break the ranking's ordering; it says no more than a missing score.
  if (std::isnan(score)) return std::nullopt;
  return score;
}

struct Candidate {
  size_t sample_idx = 0;
  double rank_key = 0.0;  // higher ranks better
};

// The successful samples in sample-index order with the rule's rank key.
std::vector<Candidate> candidates_of(const RowResult& row, const ExportOptions& options) {
  std::vector<Candidate> candidates;
  for (size_t i = 0; i < row.samples.size(); ++i) {
    if (!is_successful_sample(row.samples[i])) continue;
    const auto length = static_cast<double>(num_code_points(row.samples[i].output));
    switch (options.dpo_rule) {
      case DpoRule::Longest:
        candidates.push_back({i, length});
        break;
      case DpoRule::Shortest:
        candidates.push_back({i, -length});
        break;
      case DpoRule::FirstChosen:
      case DpoRule::LastChosen:
        candidates.push_back({i, 0.0});
        break;
      case DpoRule::Score:
        if (const auto score = sample_score(row, i, options)) candidates.push_back({i, *score});
        break;
    }
  }
  return candidates;
}

constexpr const char* kUnusableReason = "marked unusable in review";
constexpr const char* kTieReason = "marked a tie in review";
constexpr const char* kNotReviewedReason = "not reviewed";

// Whether the rule ranked chosen and rejected alike (DpoPair::is_tie). chosen and rejected are
// the first and last of the ranked candidates.
bool is_rule_tie(const RowResult& row, const Candidate& chosen, const Candidate& rejected,
                 DpoRule rule) {
  switch (rule) {
    case DpoRule::Longest:
    case DpoRule::Shortest: {
      const bool both_cut = row.samples[chosen.sample_idx].finish_reason == "length" &&
                            row.samples[rejected.sample_idx].finish_reason == "length";
      return both_cut || chosen.rank_key == rejected.rank_key;
    }
    case DpoRule::Score:
      return chosen.rank_key == rejected.rank_key;
    case DpoRule::FirstChosen:
    case DpoRule::LastChosen:
      return false;  // a position, not a ranking
  }
  return false;
}

// The pair a person picked for row. Throws Error naming the row when a picked sample is missing.
DpoPair picked_pair(const RowResult& row, const PairPick& pick) {
  for (const int sample_idx : {pick.chosen_sample_idx, pick.rejected_sample_idx}) {
    if (static_cast<size_t>(sample_idx) >= row.samples.size()) {
      fail("row ", row.row_index, ": the pair pick names sample ", sample_idx, " but the row has ",
           row.samples.size(), row.samples.size() == 1 ? " sample" : " samples");
    }
  }
  return {static_cast<size_t>(pick.chosen_sample_idx),
          static_cast<size_t>(pick.rejected_sample_idx)};
}

// The pair as a record. chosen and rejected are the samples' outputs as options.reasoning writes
// them; under Separate, a pair with reasoning on either side also gets chosen_reasoning and
// rejected_reasoning ("" for a side without).
Json dpo_record(const RowResult& row, const DpoPair& pair, ReasoningExport mode) {
  RowResult storage;
  const RowResult& exported = row_for_export(row, mode, storage);
  const SampleResult& chosen = exported.samples[pair.chosen_sample_idx];
  const SampleResult& rejected = exported.samples[pair.rejected_sample_idx];
  Json record = Json::object();
  record["prompt"] = row.prompt;
  record["chosen"] = chosen.output;
  record["rejected"] = rejected.output;
  if (has_reasoning(chosen) || has_reasoning(rejected)) {
    record["chosen_reasoning"] = chosen.reasoning;
    record["rejected_reasoning"] = rejected.reasoning;
  }
  return record;
}

}  // namespace

std::optional<DpoPair> choose_dpo_pair(const RowResult& row, const ExportOptions& options,
                                       std::string* why_none) {
  const auto none = [&](const char* why) {
    if (why_none != nullptr) *why_none = why;
    return std::nullopt;
  };
  std::vector<Candidate> candidates = candidates_of(row, options);
  if (candidates.size() < 2) {
    return none(options.dpo_rule == DpoRule::Score
                    ? "with fewer than two successful samples with a score"
                    : "with fewer than two successful samples");
  }
  DpoPair pair;
  if (options.dpo_rule == DpoRule::LastChosen) {
    pair = {candidates.back().sample_idx, candidates.front().sample_idx};
  } else {
    // Stable: equal keys keep sample-index order, so ties go to the lower index for chosen and
    // the higher index for rejected. FirstChosen has all keys equal and so keeps its order.
    std::stable_sort(
        candidates.begin(), candidates.end(),
        [](const Candidate& a, const Candidate& b) { return a.rank_key > b.rank_key; });
    pair = {candidates.front().sample_idx, candidates.back().sample_idx};
    pair.is_tie = is_rule_tie(row, candidates.front(), candidates.back(), options.dpo_rule);
  }
  // Identical texts carry no preference; a pair of them would only add noise to training.
  if (row.samples[pair.chosen_sample_idx].output == row.samples[pair.rejected_sample_idx].output)
    return none("with identical chosen and rejected outputs");
  return pair;
}

ExportStats write_dpo_export(const JobStore& job, ExportOutput& out, const ExportOptions& options) {
  ExportStats stats;
  const std::map<int64_t, PairPick> picks = job.pair_picks();
  for_each_readable_row(job, stats, [&](const RowResult& row) {
    if (const char* why = why_row_left_out(row, options, /*honours_include_failed=*/false)) {
      stats.leave_out(why);
      return;
    }
    const auto pick = picks.find(row.row_index);
    if (pick != picks.end() && pick->second.is_unusable) {
      stats.leave_out(kUnusableReason);
      return;
    }
    if (pick != picks.end() && pick->second.is_tie) {
      stats.leave_out(kTieReason);
      return;
    }
    if (pick == picks.end() && options.reviewed_only) {
      stats.leave_out(kNotReviewedReason);
      return;
    }
    std::optional<DpoPair> pair;
    std::string why_none;
    try {
      pair = pick != picks.end() ? picked_pair(row, pick->second)
                                 : choose_dpo_pair(row, options, &why_none);
    } catch (const Error& e) {
      fail(job.path(), ": ", e.what());
    }
    if (!pair) {
      stats.leave_out(why_none);
      return;
    }
    if (pick != picks.end()) {
      stats.rows_picked++;
    } else if (pair->is_tie) {
      stats.dpo_rule_ties++;
    }
    out.write(to_json_text(dpo_record(row, *pair, options.reasoning)));
    out.write("\n");
    stats.rows_written++;
    stats.records_written++;
  });
  return stats;
}

std::string describe_dpo_sources(const ExportStats& stats, const ExportOptions& options) {
  const int64_t by_rule = stats.rows_written - stats.rows_picked;
  const int64_t ties = stats.dpo_rule_ties;
  return str_cat(stats.rows_picked, stats.rows_picked == 1 ? " pair" : " pairs",
                 " from review picks, ", by_rule, " by the ", to_string(options.dpo_rule), " rule",
                 options.reviewed_only ? " (reviewed rows only)" : "", ", ", ties,
                 ties == 1 ? " of them a tie" : " of them ties");
}

}  // namespace sluice
