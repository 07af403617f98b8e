// Exporting a job's results to the formats training tools read. Every exporter streams the job
// through JobStore::for_each_result (one row in memory at a time), writes to a temporary file
// beside the output and renames it over the output only when complete, so a failed or
// interrupted export never leaves a half-written file under the final name. Every string written
// is valid UTF-8 (invalid bytes become U+FFFD).
//
// Formats (which rows, and the shape of each record):
//
//   jsonl    One object per row, keys in this order: row_index, line, status, input (the source
//            row's fields, as an object), messages, prompt, prompt_tokens, then
//              - when the job has n = 1: output, output_tokens, finish_reason, output_token_ids,
//                extra (null when the row has no sample, e.g. a failed row);
//              - otherwise: samples, an array of {output, output_tokens, finish_reason,
//                output_token_ids, extra};
//            then seed, queue_ms, ttft_ms, total_ms, error ("" unless failed or skipped).
//            A sample with reasoning adds reasoning after output and reasoning_tokens after
//            output_tokens.
//   csv      RFC 4180 (CRLF line ends, fields quoted when they hold ",", '"', CR or LF) with a
//            header: row_index, status, the input's fields (union over the exported rows in
//            first-seen order; strings as is, other values as JSON, missing ones empty), prompt,
//            output (sample
//            0), output_1 .. output_{n-1} when a row has more samples, output_tokens and
//            finish_reason (of sample 0), total_ms, and error when include_failed. Result columns
//            win a name clash: an input field named like one (a dataset's own "output", or
//            "prompt", "output_1", ...) is kept as "input_<name>" ("input_output"), prefixed
//            again while that name is taken too.
//            With ExportOptions::flatten_output, the sample columns are followed by their outputs'
//            fields: one column per sample and top-level key of the outputs, named
//            "<sample column>.<key>" ("output.mood", "output_1.mood"), keys in the order of the
//            job's JSON Schema "properties" (then keys the schema does not list) or, without a
//            schema, first-seen over the exported rows. Strings are written as is, numbers and
//            true/false as JSON, null as empty, arrays and objects as compact JSON; an output
//            that is not a JSON object leaves its cells empty (its output column still holds the
//            text). Input fields named like these columns are renamed as above. At most
//            kMaxFlattenedKeys keys: more is an Error naming the job and the row. The fields are
//            the answers', whatever the output columns hold (see ReasoningExport).
//            When an exported sample has reasoning, reasoning .. reasoning_{n-1} (one per output
//            column) follow the output columns (and their fields), and reasoning_tokens (of
//            sample 0) follows output_tokens; input fields named like them are renamed as above.
//   alpaca   A JSON array of {instruction, input, output}. instruction and input come from the
//            source fields "instruction" and "input" when the row has an "instruction" field;
//            otherwise instruction is the last user message (or the prompt) and input is "".
//            output is sample 0; a sample with reasoning adds reasoning after output.
//   openai   OpenAI chat fine-tuning JSONL: {"messages": [...the conversation..., {"role":
//            "assistant", "content": output}]}, one line per sample (n > 1 gives n lines per
//            row). A row without a conversation uses [{"role": "user", "content": prompt}].
//            A sample with reasoning adds "reasoning_content" to the assistant message.
//   sharegpt A JSON array of {id, conversations: [{from, value}, ...]}, from being system, human
//            or gpt; one element per sample, id "<row_index>" or "<row_index>-<sample>" when the
//            row has several samples. A sample with reasoning adds "reasoning_content" to its
//            gpt turn.
//   dpo      JSONL of {"prompt": the rendered prompt, "chosen": output, "rejected": output} from
//            rows with at least two successful samples (finish_reason "stop" or "length"),
//            picked by ExportOptions::dpo_rule. Rows with fewer such samples, or whose chosen
//            and rejected outputs are identical, are left out and counted. A row a person
//            reviewed in the app's Pairs view (a PairPick in the job) takes the picked samples
//            instead, or is left out ("marked unusable in review", "marked a tie in review");
//            ExportStats::rows_picked counts the pairs that came from picks. With
//            ExportOptions::reviewed_only the rows without a decision are left out too ("not
//            reviewed"). A rule pair whose rule cannot tell its two samples apart (a tie: equal
//            lengths or scores, or for longest and shortest both samples cut at max_tokens) is
//            written as before, the lower sample index chosen, and counted in
//            ExportStats::dpo_rule_ties (see choose_dpo_pair). The rule and the identity check
//            compare the answers (SampleResult::output), never the reasoning, in every
//            ReasoningExport mode. A pair with reasoning on either side adds chosen_reasoning and
//            rejected_reasoning ("" for a side without).
//   openai-batch  The OpenAI Batch output format, one line per row in input order, failed and
//            skipped rows included (with an error instead of a response); see
//            export_openai_batch.h. Needs ExportOptions::batch_response_body. The app's body
//            puts a sample's reasoning in its chat message as reasoning_content and reasoning.
//
// Reasoning (ExportOptions::reasoning): the additions above are ReasoningExport::Separate's; keep
// writes each output as "<think>\n{reasoning}\n</think>\n\n{answer}" and strip as the answer,
// both without them. output_tokens always counts every generated token, reasoning included.
// Samples without reasoning export byte for byte as before in every mode.
//
// Failed and skipped rows are left out unless include_failed, which only jsonl and csv honour:
// the other formats need an output to train on. A stored row that does not read back (a damaged
// job) is left out too, and named with its error in ExportStats::unreadable_rows, so one bad row
// never keeps the good ones from export. With leave_out_invalid, every format (openai-batch too)
// leaves out the rows judged invalid (engine/jobs/row_result.h: row_validity), with the reason
// "invalid"; rows stored before validity was kept have no verdict and stay. Every row left out is
// counted with its reason.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/jobs/job_store.h"

namespace sluice {

enum class ExportFormat : uint8_t {
  Jsonl,
  Csv,
  Alpaca,
  OpenAiChat,
  ShareGpt,
  DpoPairs,
  OpenAiBatch
};

// Which of a row's samples is "chosen" and which "rejected" in a DPO pair. The rank rules order
// the successful samples best first, ties kept in sample-index order; chosen is the first and
// rejected the last.
enum class DpoRule : uint8_t {
  Longest,      // more characters (code points) ranks higher
  Shortest,     // fewer characters ranks higher
  FirstChosen,  // the first successful sample is chosen, the last rejected
  LastChosen,   // the last successful sample is chosen, the first rejected
  Score,        // a higher SampleResult::extra[score_field] (a number) ranks higher; samples
                // without the field take no part
};

// Where a thinking model's reasoning (SampleResult::reasoning) goes in an export. A sample
// without reasoning exports the same in every mode, as it did before reasoning was kept apart.
enum class ReasoningExport : uint8_t {
  Separate,  // in a place of its own where the format has one (see the formats above)
  Keep,      // written back before the answer, "<think>\n{reasoning}\n</think>\n\n{answer}",
             // as R1-style SFT data holds it; no place of its own
  Strip,     // dropped: the answer alone
};

// The most output keys ExportOptions::flatten_output turns into columns (per sample column).
inline constexpr size_t kMaxFlattenedKeys = 256;

struct ExportOptions {
  DpoRule dpo_rule = DpoRule::Longest;
  ReasoningExport reasoning = ReasoningExport::Separate;
  std::string score_field = "score";  // the key in SampleResult::extra for DpoRule::Score
  bool include_failed = false;        // jsonl and csv: also export failed and skipped rows
  // Every format: leave out rows judged invalid for the job's grammar or the row's schema
  // (row_validity: some sample not valid), counted as "invalid"; rows without a verdict stay.
  bool leave_out_invalid = false;
  // csv: one column per top-level key of each sample's output that parses as a JSON object
  // ("output.<key>", "output_1.<key>", ...); see the csv format above.
  bool flatten_output = false;
  // dpo: only the rows a person reviewed in the Pairs view (a pick); the rows without a decision
  // are left out, counted as "not reviewed".
  bool reviewed_only = false;
  // openai-batch: returns the response body (a chat.completion or text_completion object) of a
  // done row, given its request id and the job's creation time (seconds since the epoch).
  std::function<nlohmann::json(const RowResult&, const std::string& request_id, int64_t created)>
      batch_response_body;
};

struct ExportStats {
  int64_t rows_written = 0;     // rows that produced at least one record
  int64_t rows_skipped = 0;     // rows that produced none: the sum of left_out's counts
  int64_t records_written = 0;  // lines or array elements written (openai/sharegpt: per sample)
  int64_t rows_picked = 0;      // dpo: rows whose pair came from a review pick, not the rule
  int64_t dpo_rule_ties = 0;    // dpo: pairs by the rule that were ties (DpoPair::is_tie)
  // Why rows were left out, as (reason, number of rows) in first-seen order. A reason reads after
  // a count: "failed", "skipped", "unreadable", "with fewer than two successful samples", ...
  std::vector<std::pair<std::string, int64_t>> left_out;
  std::vector<UnreadableRow> unreadable_rows;  // each also counted in left_out as "unreadable"

  // Counts one row left out for reason.
  void leave_out(const std::string& reason);
  // Counts a row that did not read back as left out and keeps its error.
  void leave_out_unreadable(const UnreadableRow& row);
};

// Returns "jsonl", "csv", "alpaca", "openai", "sharegpt", "dpo" or "openai-batch".
const char* to_string(ExportFormat format);
// Parses the names above; throws Error listing them for anything else.
ExportFormat parse_export_format(std::string_view name);

// Returns "longest", "shortest", "first", "last" or "score".
const char* to_string(DpoRule rule);
// Parses the names above; throws Error listing them for anything else.
DpoRule parse_dpo_rule(std::string_view name);

// Returns "separate", "keep" or "strip".
const char* to_string(ReasoningExport mode);
// Parses the names above; throws Error listing them for anything else.
ReasoningExport parse_reasoning_export(std::string_view name);

// Returns "" when no row was left out, else e.g. "5 rows left out: 3 failed, 2 unreadable".
std::string describe_left_out(const ExportStats& stats);

// Writes every result of job to output_path in format (through a temporary file that is renamed
// over output_path when complete). Throws Error naming the file or row at fault; the output path
// is then untouched.
ExportStats export_job(const JobStore& job, ExportFormat format, const std::string& output_path,
                       const ExportOptions& options = {});

}  // namespace sluice
