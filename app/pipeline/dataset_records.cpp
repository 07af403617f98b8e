#include "app/pipeline/dataset_records.h"

#include <algorithm>

#include "app/pipeline/judge_rubric.h"
#include "engine/core/error.h"
#include "engine/core/sha256.h"
#include "engine/jobs/job_store.h"

namespace sluice {

using Json = nlohmann::ordered_json;

namespace {

Json messages_with(const RowResult& row, const std::string& answer) {
  Json messages = Json::array();
  for (const ChatMessage& m : row.messages)
    messages.push_back({{"content", m.content}, {"role", m.role}});
  if (messages.empty()) messages.push_back({{"content", row_instruction(row)}, {"role", "user"}});
  messages.push_back({{"content", answer}, {"role", "assistant"}});
  return messages;
}

std::optional<double> score_of(const SampleResult& s) {
  const auto it = s.extra.find("score");
  if (it == s.extra.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

std::string rationale_of(const SampleResult& s) {
  const auto judge = s.extra.find("judge");
  if (judge == s.extra.end() || !judge->is_object()) return "";
  const auto rationales = judge->find("rationales");
  if (rationales == judge->end() || !rationales->is_array() || rationales->empty()) return "";
  const Json& first = rationales->front();
  return first.is_string() ? first.get<std::string>() : "";
}

// A 64-bit mix (splitmix64) for BestVsRandom's seeded choice per row.
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

bool is_usable(const RowResult& row, size_t s, const Removals& removals) {
  const SampleResult& sample = row.samples[s];
  if (sample.finish_reason != "stop" && sample.finish_reason != "length") return false;
  return !removals.samples.count({row.row_index, static_cast<int>(s)});
}

}  // namespace

DatasetRecords build_dataset_records(const JobStore& generated,
                                     const PipelineDescription& description,
                                     const Removals& removals,
                                     const std::map<int64_t, PairPick>& picks) {
  DatasetRecords out;
  const PipelineStep* judge_step = description.find(StepKind::Judge);
  if (judge_step) {
    out.columns = {{"prompt", RecordType::String},
                   {"prompt_id", RecordType::String},
                   {"chosen", RecordType::Messages},
                   {"rejected", RecordType::Messages},
                   {"score_chosen", RecordType::Double},
                   {"score_rejected", RecordType::Double},
                   {"rationale_chosen", RecordType::String},
                   {"rationale_rejected", RecordType::String},
                   {"row", RecordType::Int64},
                   {"source", RecordType::String}};
  } else {
    out.columns = {{"prompt", RecordType::String},
                   {"messages", RecordType::Messages},
                   {"output_tokens", RecordType::Int64},
                   {"row", RecordType::Int64},
                   {"sample", RecordType::Int64}};
  }
  generated.for_each_result([&](const RowResult& row) {
    if (row.status != RowStatus::Done) return;
    if (removals.rows.count(row.row_index)) return;
    const std::string prompt = row_instruction(row);
    if (!judge_step) {
      for (size_t s = 0; s < row.samples.size(); ++s) {
        if (!is_usable(row, s, removals)) continue;
        out.rows.push_back({{"prompt", prompt},
                            {"messages", messages_with(row, row.samples[s].output)},
                            {"output_tokens", row.samples[s].output_tokens},
                            {"row", row.row_index},
                            {"sample", static_cast<int64_t>(s)}});
      }
      return;
    }
    int chosen = -1, rejected = -1;
    std::string source = "judge";
    if (const auto pick = picks.find(row.row_index); pick != picks.end()) {
      if (!pick->second.is_pair()) {
        ++out.rows_without_pair[pick->second.is_tie ? "a tie in review" : "discarded in review"];
        return;
      }
      chosen = pick->second.chosen_sample_idx;
      rejected = pick->second.rejected_sample_idx;
      const int n = static_cast<int>(row.samples.size());
      if (chosen < 0 || chosen >= n || rejected < 0 || rejected >= n)
        fail(generated.path(), ": row ", row.row_index, ": the review's pick names sample ",
             std::max(chosen, rejected), " of ", n);
      source = "review";
    } else {
      const PairOptions& rule = judge_step->judge.pairs;
      std::vector<std::pair<double, int>> scored;
      for (size_t s = 0; s < row.samples.size(); ++s)
        if (is_usable(row, s, removals))
          if (const auto score = score_of(row.samples[s]))
            scored.push_back({*score, static_cast<int>(s)});
      if (scored.size() < 2) {
        ++out.rows_without_pair["fewer than two judged samples"];
        return;
      }
      // Best: the highest score, the lower index among equals; worst: the lowest, likewise.
      auto best = std::max_element(scored.begin(), scored.end(), [](const auto& a, const auto& b) {
        return a.first < b.first || (a.first == b.first && a.second > b.second);
      });
      chosen = best->second;
      if (rule.rule == PairRule::BestVsWorst) {
        auto worst =
            std::min_element(scored.begin(), scored.end(), [&](const auto& a, const auto& b) {
              if (a.second == chosen) return false;
              if (b.second == chosen) return true;
              return a.first < b.first || (a.first == b.first && a.second < b.second);
            });
        rejected = worst->second;
      } else {
        std::vector<int> others;
        for (const auto& [score, s] : scored)
          if (s != chosen) others.push_back(s);
        rejected =
            others[mix(rule.seed ^ mix(static_cast<uint64_t>(row.row_index))) % others.size()];
      }
      const double margin = *score_of(row.samples[chosen]) - *score_of(row.samples[rejected]);
      if (margin == 0.0 && rule.drop_ties) {
        ++out.rows_without_pair["a tie by the judge"];
        return;
      }
      if (margin < rule.min_margin) {
        ++out.rows_without_pair["a margin under min_margin"];
        return;
      }
    }
    const SampleResult& c = row.samples[static_cast<size_t>(chosen)];
    const SampleResult& r = row.samples[static_cast<size_t>(rejected)];
    if (c.output == r.output) {
      ++out.rows_without_pair["identical answers"];
      return;
    }
    (source == "review" ? out.pairs_by_review : out.pairs_by_judge)++;
    out.chosen_tokens.push_back(c.output_tokens);
    out.rejected_tokens.push_back(r.output_tokens);
    const auto sc = score_of(c), sr = score_of(r);
    out.rows.push_back({{"prompt", prompt},
                        {"prompt_id", sha256_hex(prompt)},
                        {"chosen", messages_with(row, c.output)},
                        {"rejected", messages_with(row, r.output)},
                        {"score_chosen", sc ? Json(*sc) : Json()},
                        {"score_rejected", sr ? Json(*sr) : Json()},
                        {"rationale_chosen", rationale_of(c)},
                        {"rationale_rejected", rationale_of(r)},
                        {"row", row.row_index},
                        {"source", source}});
  });
  return out;
}

}  // namespace sluice
