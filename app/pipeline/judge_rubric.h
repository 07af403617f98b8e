// What a judge is asked and how its answer is read: the rubric's prompt (UltraFeedback's overall
// rating of one response, or two responses compared), the JSON Schema the judge's output is
// constrained to (a rationale first, then the verdict, so the verdict follows the reasoning), and
// the parse of an output into a verdict.
#pragma once

#include <optional>
#include <string>

#include "app/pipeline/pipeline_description.h"
#include "engine/jobs/row_result.h"

namespace sluice {

// The version of the built-in wording: part of the judge's cache key, so a changed wording
// re-judges.
inline constexpr const char* kJudgeRubricVersion = "sluice-judge-1";

// The JSON Schema of a judge's answer: {"rationale": string of at most rationale_chars, "rating":
// integer 1-5} or {"rationale": ..., "winner": "A" | "B" | "tie"}.
std::string judge_schema(JudgeRubric rubric, int rationale_chars);

// The judge's prompt for one response to instruction (ultrafeedback).
std::string rating_prompt(const std::string& instructions, const std::string& instruction,
                          const std::string& response);
// The judge's prompt comparing response a (shown as A) with b (shown as B).
std::string comparison_prompt(const std::string& instructions, const std::string& instruction,
                              const std::string& a, const std::string& b);

// The rubric's built-in wording (what "instructions" in a description replaces).
std::string default_judge_instructions(JudgeRubric rubric);

// A judge's answer: a rating (1-5), or the winner of a comparison as 1 (A), 0 (B) or 0.5 (tie).
struct JudgeVerdict {
  double value = 0.0;
  std::string rationale;
};

// Reads output as the rubric's JSON; nullopt when it is not (cut off by max-tokens, say), with
// *why saying so.
std::optional<JudgeVerdict> parse_judge_output(JudgeRubric rubric, const std::string& output,
                                               std::string* why = nullptr);

// The instruction a row's samples answer: its conversation's last user turn (the input's prompt
// as the person wrote it, without the chat template), else its prompt text.
std::string row_instruction(const RowResult& row);

}  // namespace sluice
