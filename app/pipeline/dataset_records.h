// A pipeline's dataset: the generated rows the filter and dedup steps kept, as records. With a
// judge step, DPO pairs as ultrafeedback_binarized has them (prompt, prompt_id, chosen and
// rejected as message lists, score_chosen, score_rejected) plus the rationales and where the pair
// came from; a person's decision in the Pairs tab (a pair pick) wins over the judge. Without a
// judge, one chat record per kept sample (prompt, messages).
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "app/pipeline/pipeline_description.h"
#include "engine/jobs/pair_pick.h"

namespace sluice {

class JobStore;

// What the filter and dedup steps took out, each with its reason.
struct Removals {
  std::map<std::pair<int64_t, int>, std::string> samples;  // (row, sample) -> the filter's reason
  struct Row {
    std::string reason;    // "exact duplicate of row 17", "contaminated: ...", ...
    int64_t cluster = -1;  // the duplicate cluster (its kept row), -1 for none
  };
  std::map<int64_t, Row> rows;  // row -> the dedup step's verdict
};

enum class RecordType : uint8_t { String, Int64, Double, Messages };

struct RecordColumn {
  std::string name;
  RecordType type = RecordType::String;
};

struct DatasetRecords {
  std::vector<RecordColumn> columns;
  std::vector<nlohmann::ordered_json> rows;  // objects with the columns' keys, in their order
  // How the pairs came about (judge pipelines).
  int64_t pairs_by_judge = 0;
  int64_t pairs_by_review = 0;
  std::map<std::string, int64_t> rows_without_pair;  // reason -> rows
  std::vector<int> chosen_tokens, rejected_tokens;   // lengths of the pairs' answers
};

// Returns the records of the generated job's rows under the description's judge and pair
// options, without what removals took out, with picks (the Pairs tab's decisions) over the judge.
DatasetRecords build_dataset_records(const JobStore& generated,
                                     const PipelineDescription& description,
                                     const Removals& removals,
                                     const std::map<int64_t, PairPick>& picks);

}  // namespace sluice
