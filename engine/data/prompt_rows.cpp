#include "engine/data/prompt_rows.h"

#include <fstream>

#include "engine/core/error.h"
#include "engine/core/mapped_file.h"

namespace sluice {

namespace {

constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";

std::string_view strip_bom(std::string_view text) {
  return text.substr(0, 3) == kUtf8Bom ? text.substr(3) : text;
}

bool is_blank(std::string_view line) {
  return line.find_first_not_of(" \t\r\n") == std::string_view::npos;
}

}  // namespace

std::vector<PromptRow> read_jsonl_prompts(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, ": cannot open");
  std::vector<PromptRow> rows;
  std::string line;
  size_t line_number = 0;
  while (std::getline(in, line)) {
    ++line_number;
    std::string_view text = line;
    if (line_number == 1) text = strip_bom(text);
    if (is_blank(text)) continue;
    nlohmann::ordered_json row;
    try {
      row = nlohmann::ordered_json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
      fail(path, ":", line_number, ": malformed JSON: ", e.what());
    }
    if (!row.is_object())
      fail(path, ":", line_number, ": expected a JSON object with a \"prompt\" field");
    if (!row.contains("prompt") || !row["prompt"].is_string()) {
      fail(path, ":", line_number, ": missing string field \"prompt\"");
    }
    rows.push_back(PromptRow{line_number, row.value("id", nlohmann::ordered_json()),
                             row["prompt"].get<std::string>()});
  }
  if (in.bad()) fail(path, ": read error");
  if (rows.empty()) fail(path, ": no rows (the file is empty)");
  return rows;
}

std::vector<PromptRow> read_alpaca_prompts(const std::string& path, size_t limit) {
  const std::string content = read_text_file(path);
  nlohmann::ordered_json doc;
  try {
    doc = nlohmann::ordered_json::parse(strip_bom(content));
  } catch (const nlohmann::json::parse_error& e) {
    fail(path, ": malformed JSON: ", e.what());
  }
  if (!doc.is_array())
    fail(path, ": expected a JSON array of {instruction, input, output} objects");
  std::vector<PromptRow> rows;
  for (size_t i = 0; i < doc.size() && (limit == 0 || rows.size() < limit); ++i) {
    const auto& item = doc[i];
    if (!item.is_object() || !item.contains("instruction") || !item["instruction"].is_string()) {
      fail(path, ": element ", i + 1, ": missing string field \"instruction\"");
    }
    std::string prompt = item["instruction"].get<std::string>();
    if (item.contains("input") && item["input"].is_string() &&
        !item["input"].get<std::string>().empty()) {
      prompt += "\n\n" + item["input"].get<std::string>();
    }
    rows.push_back(PromptRow{i + 1, item.value("id", nlohmann::ordered_json()), std::move(prompt)});
  }
  if (rows.empty()) fail(path, ": no rows (the array is empty)");
  return rows;
}

std::vector<PromptRow> read_prompt_file(const std::string& path, size_t limit) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, ": cannot open");
  char first = 0;
  std::string head(256, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  std::string_view view = strip_bom(head);
  for (const char c : view) {
    if (c != ' ' && c != '\n' && c != '\r' && c != '\t') {
      first = c;
      break;
    }
  }
  if (first == '[') return read_alpaca_prompts(path, limit);
  auto rows = read_jsonl_prompts(path);
  if (limit > 0 && rows.size() > limit) rows.resize(limit);
  return rows;
}

}  // namespace sluice
