#include "engine/export/export_chat.h"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/core/error.h"
#include "engine/export/export_output.h"
#include "engine/export/export_rows.h"
#include "engine/jobs/job_store.h"
#include "engine/jobs/row_codec.h"

namespace sluice {
namespace {

using Json = nlohmann::ordered_json;

// Streams a JSON array one element at a time, so a large job never sits in memory whole.
class JsonArrayWriter {
 public:
  explicit JsonArrayWriter(ExportOutput& out) : out_(out) { out_.write("["); }
  void add(const Json& element) {
    out_.write(is_first_ ? "\n  " : ",\n  ");
    out_.write(to_json_text(element));
    is_first_ = false;
  }
  void finish() { out_.write(is_first_ ? "]\n" : "\n]\n"); }

 private:
  ExportOutput& out_;
  bool is_first_ = true;
};

// Chat formats train on outputs, so only done rows with at least one sample take part. Returns
// true for those; counts any other row in stats with the reason it is left out.
bool has_output(const RowResult& row, const ExportOptions& options, ExportStats& stats) {
  if (const char* why = why_row_left_out(row, options, /*honours_include_failed=*/false)) {
    stats.leave_out(why);
    return false;
  }
  if (row.samples.empty()) {
    stats.leave_out("without samples");
    return false;
  }
  return true;
}

std::string field_text(const Json& value) {
  return value.is_string() ? value.get<std::string>() : to_json_text(value);
}

// The instruction a row answered when the source did not name one: the last user turn, or the
// prompt itself.
std::string last_user_text(const RowResult& row) {
  for (auto it = row.messages.rbegin(); it != row.messages.rend(); ++it) {
    if (it->role == "user") return it->content;
  }
  return row.prompt;
}

Json alpaca_record(const RowResult& row) {
  Json record = Json::object();
  const bool has_instruction = row.input.is_object() && row.input.contains("instruction");
  if (has_instruction) {
    record["instruction"] = field_text(row.input["instruction"]);
    record["input"] = row.input.contains("input") ? field_text(row.input["input"]) : "";
  } else {
    record["instruction"] = last_user_text(row);
    record["input"] = "";
  }
  record["output"] = row.samples[0].output;
  // Alpaca records are flat fields, not chat messages, so no chat template reads them: the
  // reasoning takes the plain name the job file and the jsonl export use.
  if (has_reasoning(row.samples[0])) record["reasoning"] = row.samples[0].reasoning;
  return record;
}

const char* sharegpt_role(const std::string& role) {
  if (role == "user") return "human";
  if (role == "assistant") return "gpt";
  if (role == "system") return "system";
  return nullptr;
}

Json sharegpt_turn(const std::string& role, const std::string& value) {
  const char* from = sharegpt_role(role);
  return Json{{"from", from != nullptr ? from : role}, {"value", value}};
}

// The assistant's message of an openai record: content is the answer; a sample's reasoning goes
// beside it as reasoning_content, the name DeepSeek's API and llama.cpp's server use, and the
// one thinking models' chat templates (Qwen3's, for one) read when a trainer renders messages.
Json assistant_message(const SampleResult& sample) {
  Json message{{"role", "assistant"}, {"content", sample.output}};
  if (has_reasoning(sample)) message["reasoning_content"] = sample.reasoning;
  return message;
}

// The gpt turn of a sharegpt record: ShareGPT has no field for reasoning. Loaders turn its turns
// into chat messages (from -> role, value -> content) and can map further keys onto the message
// (Axolotl's message_property_mappings), so the reasoning keeps the message name of the openai
// format, reasoning_content, and a tool that knows only from/value reads the answer as before.
// Tools that want the reasoning inside the text (LLaMA-Factory's <think> handling) take keep.
Json sharegpt_answer_turn(const SampleResult& sample) {
  Json turn = sharegpt_turn("assistant", sample.output);
  if (has_reasoning(sample)) turn["reasoning_content"] = sample.reasoning;
  return turn;
}

}  // namespace

ExportStats write_alpaca_export(const JobStore& job, ExportOutput& out,
                                const ExportOptions& options) {
  ExportStats stats;
  JsonArrayWriter array(out);
  for_each_readable_row(job, stats, [&](const RowResult& row) {
    if (!has_output(row, options, stats)) return;
    RowResult storage;
    array.add(alpaca_record(row_for_export(row, options.reasoning, storage)));
    stats.rows_written++;
    stats.records_written++;
  });
  array.finish();
  return stats;
}

ExportStats write_openai_chat_export(const JobStore& job, ExportOutput& out,
                                     const ExportOptions& options) {
  ExportStats stats;
  for_each_readable_row(job, stats, [&](const RowResult& row) {
    if (!has_output(row, options, stats)) return;
    Json conversation = messages_to_json(conversation_of(row));
    // A past turn's reasoning under the OpenAI format's name, as the answer's.
    for (Json& message : conversation) {
      if (!message.contains("reasoning")) continue;
      message["reasoning_content"] = std::move(message["reasoning"]);
      message.erase("reasoning");
    }
    RowResult storage;
    for (const SampleResult& sample : row_for_export(row, options.reasoning, storage).samples) {
      Json messages = conversation;
      messages.push_back(assistant_message(sample));
      out.write(to_json_text(Json{{"messages", std::move(messages)}}));
      out.write("\n");
      stats.records_written++;
    }
    stats.rows_written++;
  });
  return stats;
}

ExportStats write_sharegpt_export(const JobStore& job, ExportOutput& out,
                                  const ExportOptions& options) {
  ExportStats stats;
  JsonArrayWriter array(out);
  for_each_readable_row(job, stats, [&](const RowResult& row) {
    if (!has_output(row, options, stats)) return;
    Json conversation = Json::array();
    for (const ChatMessage& message : conversation_of(row))
      conversation.push_back(sharegpt_turn(message.role, message.content));
    RowResult storage;
    const std::vector<SampleResult>& samples =
        row_for_export(row, options.reasoning, storage).samples;
    for (size_t i = 0; i < samples.size(); ++i) {
      Json turns = conversation;
      turns.push_back(sharegpt_answer_turn(samples[i]));
      std::string id = std::to_string(row.row_index);
      if (row.samples.size() > 1) id += str_cat('-', i);
      array.add(Json{{"id", std::move(id)}, {"conversations", std::move(turns)}});
      stats.records_written++;
    }
    stats.rows_written++;
  });
  array.finish();
  return stats;
}

}  // namespace sluice
