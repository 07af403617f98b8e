#include "app/pipeline/judge_step.h"

#include <filesystem>
#include <fstream>

#include "app/pipeline/judge_rubric.h"
#include "engine/core/error.h"
#include "engine/jobs/job_store.h"

namespace sluice {

using Json = nlohmann::ordered_json;

namespace {

bool is_judged(const SampleResult& s) {
  return s.finish_reason == "stop" || s.finish_reason == "length";
}

// The value of a row's input field, or fallback.
int64_t field_int(const Json& input, const char* key, int64_t fallback) {
  const auto it = input.find(key);
  return it != input.end() && it->is_number_integer() ? it->get<int64_t>() : fallback;
}

}  // namespace

int64_t write_judge_input(const JobStore& generated, const JudgeStep& judge,
                          const std::string& path) {
  const std::string instructions =
      judge.instructions.empty() ? default_judge_instructions(judge.rubric) : judge.instructions;
  const std::string temporary = path + ".writing";
  std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
  if (!out) fail(temporary, ": cannot be written");
  int64_t lines = 0;
  auto line = [&](const Json& j) {
    out << j.dump(-1, ' ', false, Json::error_handler_t::replace) << "\n";
    ++lines;
  };
  generated.for_each_result([&](const RowResult& row) {
    if (row.status != RowStatus::Done) return;
    const std::string instruction = row_instruction(row);
    std::vector<int> judged;
    for (size_t i = 0; i < row.samples.size(); ++i)
      if (is_judged(row.samples[i])) judged.push_back(static_cast<int>(i));
    if (judge.rubric == JudgeRubric::Ultrafeedback) {
      for (const int s : judged)
        line({{"prompt", rating_prompt(instructions, instruction, row.samples[s].output)},
              {"row", row.row_index},
              {"sample", s}});
      return;
    }
    for (size_t a = 0; a < judged.size(); ++a) {
      for (size_t b = a + 1; b < judged.size(); ++b) {
        const int i = judged[a], j = judged[b];
        const std::string& x = row.samples[i].output;
        const std::string& y = row.samples[j].output;
        line({{"prompt", comparison_prompt(instructions, instruction, x, y)},
              {"row", row.row_index},
              {"sample", i},
              {"other", j},
              {"order", "AB"}});
        line({{"prompt", comparison_prompt(instructions, instruction, y, x)},
              {"row", row.row_index},
              {"sample", i},
              {"other", j},
              {"order", "BA"}});
      }
    }
  });
  out.close();
  if (!out) fail(temporary, ": cannot be written");
  std::filesystem::rename(temporary, path);
  return lines;
}

Judgements read_judgements(const JobStore& judge_job, const JudgeStep& judge) {
  // Per row, per sample: ratings and rationales.
  struct Votes {
    std::vector<double> ratings;
    std::vector<std::string> rationales;
  };
  std::map<int64_t, std::map<int, Votes>> votes;
  // Comparisons: (row, sample, other, judge sample) -> the sample's outcome in each order.
  std::map<std::tuple<int64_t, int, int, size_t>, std::pair<double, double>> orders;
  std::map<std::tuple<int64_t, int, int, size_t>, int> seen_orders;
  Judgements out;
  judge_job.for_each_result([&](const RowResult& r) {
    const int64_t row = field_int(r.input, "row", -1);
    const int sample = static_cast<int>(field_int(r.input, "sample", -1));
    if (row < 0 || sample < 0) return;
    const int other = static_cast<int>(field_int(r.input, "other", -1));
    const bool swapped = r.input.value("order", "AB") == "BA";
    for (size_t k = 0; k < r.samples.size(); ++k) {
      ++out.num_asked;
      const auto verdict = parse_judge_output(judge.rubric, r.samples[k].output);
      if (!verdict) {
        ++out.num_failed;
        continue;
      }
      if (judge.rubric == JudgeRubric::Ultrafeedback) {
        Votes& v = votes[row][sample];
        v.ratings.push_back(verdict->value);
        v.rationales.push_back(verdict->rationale);
        continue;
      }
      // verdict->value is A's outcome; the sample is A in order AB, B in order BA.
      const double for_sample = swapped ? 1.0 - verdict->value : verdict->value;
      Votes& mine = votes[row][sample];
      Votes& theirs = votes[row][other];
      mine.ratings.push_back(for_sample);
      mine.rationales.push_back(verdict->rationale);
      theirs.ratings.push_back(1.0 - for_sample);
      theirs.rationales.push_back(verdict->rationale);
      const auto key = std::make_tuple(row, sample, other, k);
      auto& pair = orders[key];
      (swapped ? pair.second : pair.first) = for_sample;
      seen_orders[key] |= swapped ? 2 : 1;
    }
  });
  if (judge.rubric == JudgeRubric::Pairwise) {
    int64_t both = 0, agree = 0;
    for (const auto& [key, mask] : seen_orders) {
      if (mask != 3) continue;
      ++both;
      if (orders[key].first == orders[key].second) ++agree;
    }
    if (both > 0) out.position_agreement = static_cast<double>(agree) / static_cast<double>(both);
  }
  const char* rubric = judge.rubric == JudgeRubric::Ultrafeedback ? "ultrafeedback" : "pairwise";
  for (auto& [row, samples] : votes) {
    int max_sample = samples.rbegin()->first;
    std::vector<Json>& extras = out.extras[row];
    extras.assign(static_cast<size_t>(max_sample) + 1, Json());
    for (auto& [sample, v] : samples) {
      double sum = 0.0;
      for (const double x : v.ratings) sum += x;
      const double score = sum / static_cast<double>(v.ratings.size());
      out.scores.push_back(score);
      extras[static_cast<size_t>(sample)] = {
          {"score", score},
          {"judge", {{"rubric", rubric}, {"ratings", v.ratings}, {"rationales", v.rationales}}}};
    }
  }
  return out;
}

void apply_judgements(JobStore& generated, const Judgements& judgements) {
  std::vector<RowResult> changed;
  generated.for_each_result([&](const RowResult& row) {
    RowResult updated = row;
    const auto it = judgements.extras.find(row.row_index);
    for (size_t s = 0; s < updated.samples.size(); ++s) {
      Json& extra = updated.samples[s].extra;
      if (!extra.is_object()) extra = Json::object();
      extra.erase("score");
      extra.erase("judge");
      if (it != judgements.extras.end() && s < it->second.size() && !it->second[s].is_null()) {
        for (const auto& [key, value] : it->second[s].items()) extra[key] = value;
      }
    }
    if (!(updated == row)) changed.push_back(std::move(updated));
  });
  for (const RowResult& row : changed) generated.add_result(row);
  generated.flush();
}

}  // namespace sluice
