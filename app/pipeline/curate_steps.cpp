#include "app/pipeline/curate_steps.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "app/pipeline/judge_rubric.h"
#include "app/pipeline/whole_file.h"
#include "engine/core/error.h"
#include "engine/core/json_parse.h"
#include "engine/core/mapped_file.h"
#include "engine/curate/decontamination.h"
#include "engine/curate/dedup.h"
#include "engine/curate/row_filters.h"
#include "engine/jobs/job_store.h"

namespace sluice {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

namespace {

void write_json_file(const std::string& path, const Json& json) {
  write_whole_file(path, json.dump(1, ' ', false, Json::error_handler_t::replace) + "\n");
}

// The step's stored verdicts, or nullopt when there are none (or they do not read: computed
// again).
std::optional<Json> read_cached(const std::string& path) {
  if (!fs::exists(path)) return std::nullopt;
  Json j;
  if (try_parse_json(read_text_file(path), j) || !j.is_object() || !j.contains("removed"))
    return std::nullopt;
  return j;
}

bool is_answer(const SampleResult& s) {
  return s.finish_reason == "stop" || s.finish_reason == "length";
}

// A JSON value's strings, joined by newlines (an evaluation record's text).
void collect_strings(const Json& value, std::string& out) {
  if (value.is_string()) {
    if (!out.empty()) out += "\n";
    out += value.get<std::string>();
  } else if (value.is_object() || value.is_array()) {
    for (const auto& item : value) collect_strings(item, out);
  }
}

}  // namespace

void run_filter_step(const FilterStep& filter, const JobStore& generated, const std::string& path,
                     Removals& removals, StepRun& run) {
  std::optional<Json> cached = read_cached(path);
  run.was_cached = cached.has_value();
  if (!cached) {
    RowFilterOptions options;
    options.min_words = filter.min_words;
    options.max_words = filter.max_words;
    options.min_chars = filter.min_chars;
    options.max_chars = filter.max_chars;
    options.default_refusals = filter.default_refusals;
    options.refusal_patterns = filter.patterns;
    const RowFilter row_filter(options);
    Json removed = Json::array();
    int64_t samples = 0;
    generated.for_each_result([&](const RowResult& row) {
      if (row.status != RowStatus::Done) return;
      for (size_t s = 0; s < row.samples.size(); ++s) {
        if (!is_answer(row.samples[s])) continue;
        ++samples;
        if (const auto reason = row_filter.reason(row.samples[s].output))
          removed.push_back({{"row", row.row_index}, {"sample", s}, {"reason", *reason}});
      }
    });
    cached = Json{{"samples", samples}, {"removed", removed}};
    write_json_file(path, *cached);
  }
  std::map<std::string, int64_t> by_reason;
  for (const Json& r : cached->at("removed")) {
    const std::string reason = r.value("reason", "");
    removals.samples[{r.value("row", int64_t{-1}), r.value("sample", -1)}] = reason;
    ++by_reason[reason.substr(0, reason.find(':'))];
  }
  run.rows_in = cached->value("samples", int64_t{0});
  run.rows_out = run.rows_in - static_cast<int64_t>(cached->at("removed").size());
  run.note = str_cat(cached->at("removed").size(), " samples removed");
  for (const auto& [reason, count] : by_reason) run.note += str_cat("; ", reason, ": ", count);
}

std::vector<std::string> read_evaluation_texts(const std::string& path) {
  const std::string text = read_text_file(path);
  std::vector<std::string> texts;
  size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '[') {
    const Json array = parse_json_text<Json>(text, path);
    for (const Json& record : array) {
      std::string joined;
      collect_strings(record, joined);
      texts.push_back(std::move(joined));
    }
    return texts;
  }
  const bool is_jsonl = first != std::string::npos && text[first] == '{';
  size_t line_number = 0;
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    ++line_number;
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (!is_jsonl) {
      texts.push_back(line);
      continue;
    }
    Json record;
    if (const auto failure = try_parse_json(line, record))
      fail(path, ":", line_number, ": ", describe_json_failure(line, *failure));
    std::string joined;
    collect_strings(record, joined);
    texts.push_back(std::move(joined));
  }
  return texts;
}

void run_dedup_step(const DedupStep& dedup, const JobStore& generated, const std::string& path,
                    Removals& removals, std::vector<ReportCluster>& clusters, StepRun& run) {
  std::optional<Json> cached = read_cached(path);
  run.was_cached = cached.has_value();
  if (!cached) {
    // The rows that take part and their texts.
    std::vector<int64_t> rows;
    std::vector<std::string> texts;
    generated.for_each_result([&](const RowResult& row) {
      if (row.status != RowStatus::Done) return;
      std::optional<std::string> text;
      for (size_t s = 0; s < row.samples.size() && !text; ++s) {
        if (is_answer(row.samples[s]) &&
            !removals.samples.count({row.row_index, static_cast<int>(s)}))
          text = dedup.field == "prompt" ? row_instruction(row) : row.samples[s].output;
      }
      if (!text) return;  // the filter took every answer
      rows.push_back(row.row_index);
      texts.push_back(std::move(*text));
    });
    DedupOptions options;
    options.exact = dedup.exact;
    options.near = dedup.near;
    options.threshold = dedup.threshold;
    options.num_permutations = dedup.num_permutations;
    options.shingle_words = dedup.shingle_words;
    options.describe_text = [&](size_t i) { return str_cat("row ", rows[i]); };
    Json removed = Json::array();
    if (dedup.exact || dedup.near) {
      const DedupResult result = find_duplicates(texts, options);
      for (size_t i = 0; i < texts.size(); ++i) {
        const DedupVerdict& v = result.verdicts[i];
        if (!v.removed) continue;
        removed.push_back({{"row", rows[i]},
                           {"reason", v.reason},
                           {"cluster", rows[static_cast<size_t>(v.cluster)]},
                           {"kind", v.similarity >= 1.0 ? "exact" : "near"},
                           {"similarity", v.similarity}});
      }
    }
    int64_t contaminated = 0;
    if (!dedup.decontaminate.empty()) {
      DecontaminationOptions decontamination;
      decontamination.ngram_words = dedup.contamination_ngram;
      decontamination.min_eval_words = std::min(8, dedup.contamination_ngram);
      const DecontaminationIndex index(read_evaluation_texts(dedup.decontaminate), decontamination);
      std::set<int64_t> already;
      for (const Json& r : removed) already.insert(r["row"].get<int64_t>());
      for (size_t i = 0; i < texts.size(); ++i) {
        if (already.count(rows[i])) continue;
        if (const auto match = index.find(texts[i])) {
          ++contaminated;
          removed.push_back(
              {{"row", rows[i]},
               {"reason", str_cat("contaminated: shares \"", match->ngram,
                                  "\" with evaluation text ", match->eval_index + 1, " of ",
                                  fs::path(dedup.decontaminate).filename().string())},
               {"kind", "contaminated"}});
        }
      }
    }
    cached = Json{{"rows", static_cast<int64_t>(rows.size())}, {"removed", removed}};
    write_json_file(path, *cached);
  }
  // Clusters: the removed rows grouped by the row they duplicate.
  std::map<int64_t, ReportCluster> by_kept;
  int64_t num_duplicates = 0, num_contaminated = 0;
  for (const Json& r : cached->at("removed")) {
    const int64_t row = r.value("row", int64_t{-1});
    Removals::Row& removal = removals.rows[row];
    removal.reason = r.value("reason", "");
    removal.cluster = r.value("cluster", int64_t{-1});
    if (removal.cluster < 0) {
      ++num_contaminated;
      continue;
    }
    ++num_duplicates;
    ReportCluster& cluster = by_kept[removal.cluster];
    cluster.kept_row = removal.cluster;
    cluster.removed_rows.push_back(row);
    if (cluster.kind != "near") cluster.kind = r.value("kind", "near");
    cluster.similarity = cluster.removed_rows.size() == 1
                             ? r.value("similarity", 0.0)
                             : std::min(cluster.similarity, r.value("similarity", 0.0));
  }
  if (!by_kept.empty()) {
    generated.for_each_result([&](const RowResult& row) {
      if (const auto it = by_kept.find(row.row_index); it != by_kept.end())
        it->second.sample_text = dedup.field == "prompt" || row.samples.empty()
                                     ? row_instruction(row)
                                     : row.samples.front().output;
    });
  }
  clusters.clear();
  for (auto& [kept, cluster] : by_kept) clusters.push_back(std::move(cluster));
  std::stable_sort(clusters.begin(), clusters.end(), [](const auto& a, const auto& b) {
    return a.removed_rows.size() > b.removed_rows.size();
  });
  run.rows_in = cached->value("rows", int64_t{0});
  run.rows_out = run.rows_in - static_cast<int64_t>(cached->at("removed").size());
  run.note = str_cat("removed ", num_duplicates, " duplicate(s) in ", clusters.size(),
                     " cluster(s), ", num_contaminated, " contaminated");
}

}  // namespace sluice
