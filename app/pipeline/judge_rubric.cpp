#include "app/pipeline/judge_rubric.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "engine/core/error.h"
#include "engine/core/json_parse.h"

namespace sluice {

using Json = nlohmann::ordered_json;

std::string judge_schema(JudgeRubric rubric, int rationale_chars) {
  Json rationale = {{"type", "string"}, {"maxLength", rationale_chars}};
  Json properties = {{"rationale", rationale}};
  if (rubric == JudgeRubric::Ultrafeedback) {
    properties["rating"] = {{"type", "integer"}, {"minimum", 1}, {"maximum", 5}};
  } else {
    properties["winner"] = {{"enum", {"A", "B", "tie"}}};
  }
  Json schema = {
      {"type", "object"},
      {"properties", properties},
      {"required", {"rationale", rubric == JudgeRubric::Ultrafeedback ? "rating" : "winner"}},
      {"additionalProperties", false}};
  return schema.dump();
}

std::string default_judge_instructions(JudgeRubric rubric) {
  if (rubric == JudgeRubric::Ultrafeedback) {
    return "You are an impartial judge. Rate the overall quality of the response to the "
           "instruction: how helpful, honest and truthful it is and how well it follows the "
           "instruction. 1 means poor, 5 means excellent.";
  }
  return "You are an impartial judge. Compare two responses to the instruction: which is more "
         "helpful, honest and truthful and follows the instruction better? The order of the "
         "responses says nothing about their quality. Answer \"tie\" when they are equally good.";
}

std::string rating_prompt(const std::string& instructions, const std::string& instruction,
                          const std::string& response) {
  return str_cat(instructions, "\n\n# Instruction\n", instruction, "\n\n# Response\n", response,
                 "\n\nAnswer in JSON: \"rationale\" (a short explanation), then \"rating\" (an "
                 "integer from 1 to 5).");
}

std::string comparison_prompt(const std::string& instructions, const std::string& instruction,
                              const std::string& a, const std::string& b) {
  return str_cat(instructions, "\n\n# Instruction\n", instruction, "\n\n# Response A\n", a,
                 "\n\n# Response B\n", b,
                 "\n\nAnswer in JSON: \"rationale\" (a short explanation), then \"winner\": "
                 "\"A\", \"B\" or \"tie\".");
}

std::optional<JudgeVerdict> parse_judge_output(JudgeRubric rubric, const std::string& output,
                                               std::string* why) {
  auto refuse = [&](const std::string& reason) -> std::optional<JudgeVerdict> {
    if (why) *why = reason;
    return std::nullopt;
  };
  Json j;
  if (const auto failure = try_parse_json(output, j))
    return refuse("the judge's answer is not JSON (" + describe_json_failure(output, *failure) +
                  ")");
  if (!j.is_object()) return refuse("the judge's answer is not a JSON object");
  JudgeVerdict verdict;
  if (j.contains("rationale") && j["rationale"].is_string())
    verdict.rationale = j["rationale"].get<std::string>();
  if (rubric == JudgeRubric::Ultrafeedback) {
    if (!j.contains("rating") || !j["rating"].is_number())
      return refuse("the judge's answer has no rating");
    verdict.value = j["rating"].get<double>();
    if (!std::isfinite(verdict.value) || verdict.value < 1 || verdict.value > 5)
      return refuse("the judge's rating is outside 1-5");
    return verdict;
  }
  if (!j.contains("winner") || !j["winner"].is_string())
    return refuse("the judge's answer has no winner");
  const std::string winner = j["winner"].get<std::string>();
  if (winner == "A") {
    verdict.value = 1.0;
  } else if (winner == "B") {
    verdict.value = 0.0;
  } else if (winner == "tie") {
    verdict.value = 0.5;
  } else {
    return refuse("the judge's winner is \"" + winner + "\"");
  }
  return verdict;
}

std::string row_instruction(const RowResult& row) {
  for (auto it = row.messages.rbegin(); it != row.messages.rend(); ++it)
    if (it->role == "user") return it->content;
  return row.prompt;
}

}  // namespace sluice
