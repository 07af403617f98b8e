#include "engine/export/exporters.h"

#include <array>
#include <utility>

#include "engine/core/error.h"
#include "engine/export/export_chat.h"
#include "engine/export/export_csv.h"
#include "engine/export/export_dpo.h"
#include "engine/export/export_jsonl.h"
#include "engine/export/export_openai_batch.h"
#include "engine/export/export_output.h"
#include "engine/jobs/job_store.h"

namespace sluice {
namespace {

constexpr std::array<std::pair<ExportFormat, const char*>, 7> kFormatNames = {{
    {ExportFormat::Jsonl, "jsonl"},
    {ExportFormat::Csv, "csv"},
    {ExportFormat::Alpaca, "alpaca"},
    {ExportFormat::OpenAiChat, "openai"},
    {ExportFormat::ShareGpt, "sharegpt"},
    {ExportFormat::DpoPairs, "dpo"},
    {ExportFormat::OpenAiBatch, "openai-batch"},
}};

constexpr std::array<std::pair<DpoRule, const char*>, 5> kDpoRuleNames = {{
    {DpoRule::Longest, "longest"},
    {DpoRule::Shortest, "shortest"},
    {DpoRule::FirstChosen, "first"},
    {DpoRule::LastChosen, "last"},
    {DpoRule::Score, "score"},
}};

constexpr std::array<std::pair<ReasoningExport, const char*>, 3> kReasoningExportNames = {{
    {ReasoningExport::Separate, "separate"},
    {ReasoningExport::Keep, "keep"},
    {ReasoningExport::Strip, "strip"},
}};

template <typename Enum, size_t N>
const char* name_of(const std::array<std::pair<Enum, const char*>, N>& names, Enum value) {
  for (const auto& [candidate, name] : names) {
    if (candidate == value) return name;
  }
  return "?";
}

template <typename Enum, size_t N>
Enum parse_name(const std::array<std::pair<Enum, const char*>, N>& names, std::string_view text,
                const char* what) {
  std::string known;
  for (const auto& [value, name] : names) {
    if (text == name) return value;
    known += known.empty() ? "" : ", ";
    known += name;
  }
  fail("unknown ", what, " '", text, "' (", known, ")");
}

ExportStats write_export(const JobStore& job, ExportFormat format, ExportOutput& out,
                         const ExportOptions& options) {
  switch (format) {
    case ExportFormat::Jsonl:
      return write_jsonl_export(job, out, options);
    case ExportFormat::Csv:
      return write_csv_export(job, out, options);
    case ExportFormat::Alpaca:
      return write_alpaca_export(job, out, options);
    case ExportFormat::OpenAiChat:
      return write_openai_chat_export(job, out, options);
    case ExportFormat::ShareGpt:
      return write_sharegpt_export(job, out, options);
    case ExportFormat::DpoPairs:
      return write_dpo_export(job, out, options);
    case ExportFormat::OpenAiBatch:
      return write_openai_batch_export(job, out, options);
  }
  fail("unknown export format ", static_cast<int>(format));
}

}  // namespace

const char* to_string(ExportFormat format) {
  return name_of(kFormatNames, format);
}

ExportFormat parse_export_format(std::string_view name) {
  return parse_name(kFormatNames, name, "export format");
}

const char* to_string(DpoRule rule) {
  return name_of(kDpoRuleNames, rule);
}

DpoRule parse_dpo_rule(std::string_view name) {
  return parse_name(kDpoRuleNames, name, "DPO rule");
}

const char* to_string(ReasoningExport mode) {
  return name_of(kReasoningExportNames, mode);
}

ReasoningExport parse_reasoning_export(std::string_view name) {
  return parse_name(kReasoningExportNames, name, "reasoning mode");
}

void ExportStats::leave_out(const std::string& reason) {
  rows_skipped++;
  for (auto& [known_reason, count] : left_out) {
    if (known_reason == reason) {
      count++;
      return;
    }
  }
  left_out.emplace_back(reason, 1);
}

void ExportStats::leave_out_unreadable(const UnreadableRow& row) {
  leave_out("unreadable");
  unreadable_rows.push_back(row);
}

std::string describe_left_out(const ExportStats& stats) {
  if (stats.rows_skipped == 0) return "";
  std::string text =
      str_cat(stats.rows_skipped, stats.rows_skipped == 1 ? " row" : " rows", " left out: ");
  for (size_t i = 0; i < stats.left_out.size(); ++i)
    text += str_cat(i == 0 ? "" : ", ", stats.left_out[i].second, " ", stats.left_out[i].first);
  return text;
}

ExportStats export_job(const JobStore& job, ExportFormat format, const std::string& output_path,
                       const ExportOptions& options) {
  ExportOutput out(output_path);
  ExportStats stats;
  // One snapshot for all passes: a job still running must not add rows between them.
  job.with_snapshot([&] { stats = write_export(job, format, out, options); });
  out.commit();
  return stats;
}

}  // namespace sluice
