#include "engine/input/chat_conversation.h"

#include <string>

#include "engine/core/error.h"

namespace sluice {

namespace {

using Json = nlohmann::ordered_json;

// ShareGPT dumps name the assistant after the product that answered; all of them are the
// assistant's side of the conversation.
std::string sharegpt_role(const std::string& from) {
  if (from == "human" || from == "user") return "user";
  if (from == "gpt" || from == "assistant" || from == "chatgpt" || from == "bard" ||
      from == "bing" || from == "model") {
    return "assistant";
  }
  if (from == "system") return "system";
  return {};
}

std::string openai_role(const std::string& role) {
  if (role == "user" || role == "assistant" || role == "system") return role;
  if (role == "developer") return "system";  // the newer name of the system role
  return {};
}

// Drops trailing assistant turns; fails when nothing is left to continue.
Conversation cut_at_last_prompt_turn(Conversation conversation) {
  while (!conversation.empty() && conversation.back().role == "assistant") {
    conversation.pop_back();
  }
  if (conversation.empty()) fail("the conversation has no user or system turn to continue");
  return conversation;
}

const Json& turns_array(const Json& record, const char* key) {
  if (!record.is_object()) fail("expected a JSON object");
  const auto it = record.find(key);
  if (it == record.end()) fail("missing \"", key, "\"");
  if (!it->is_array()) fail("\"", key, "\" is not an array");
  if (it->empty()) fail("\"", key, "\" is empty");
  return *it;
}

// OpenAI content: a string, an array of {"type": "text", "text"} parts, or null (an assistant
// turn that only calls tools).
std::string openai_content(const Json& content, size_t turn_idx) {
  if (content.is_string()) return content.get<std::string>();
  if (content.is_null()) return {};
  if (!content.is_array()) fail("messages[", turn_idx, "].content is not a string");
  std::string text;
  for (const Json& part : content) {
    if (!part.is_object() || part.value("type", "") != "text" || !part.contains("text") ||
        !part["text"].is_string()) {
      fail("messages[", turn_idx, "].content has a part that is not {\"type\": \"text\"}");
    }
    text += part["text"].get<std::string>();
  }
  return text;
}

}  // namespace

Conversation sharegpt_conversation(const Json& record) {
  const Json& turns = turns_array(record, "conversations");
  Conversation conversation;
  const auto system = record.find("system");
  if (system != record.end() && system->is_string() && !system->get<std::string>().empty()) {
    conversation.push_back({"system", system->get<std::string>()});
  }
  for (size_t i = 0; i < turns.size(); ++i) {
    const Json& turn = turns[i];
    if (!turn.is_object()) fail("conversations[", i, "] is not an object");
    const auto from = turn.find("from");
    const auto value = turn.find("value");
    if (from == turn.end() || !from->is_string()) {
      fail("conversations[", i, "] has no string \"from\"");
    }
    if (value == turn.end() || !value->is_string()) {
      fail("conversations[", i, "] has no string \"value\"");
    }
    const std::string role = sharegpt_role(from->get<std::string>());
    if (role.empty()) {
      fail("conversations[", i, "] has unknown \"from\": \"", from->get<std::string>(),
           "\" (expected human, gpt or system)");
    }
    conversation.push_back({role, value->get<std::string>()});
  }
  return cut_at_last_prompt_turn(std::move(conversation));
}

Conversation openai_conversation(const Json& record) {
  const Json& turns = turns_array(record, "messages");
  Conversation conversation;
  for (size_t i = 0; i < turns.size(); ++i) {
    const Json& turn = turns[i];
    if (!turn.is_object()) fail("messages[", i, "] is not an object");
    const auto role_it = turn.find("role");
    if (role_it == turn.end() || !role_it->is_string()) {
      fail("messages[", i, "] has no string \"role\"");
    }
    const std::string role = openai_role(role_it->get<std::string>());
    if (role.empty()) {
      fail("messages[", i, "] has unsupported role \"", role_it->get<std::string>(),
           "\" (expected system, user or assistant)");
    }
    const auto content = turn.find("content");
    if (content == turn.end()) fail("messages[", i, "] has no \"content\"");
    if (content->is_null() && role != "assistant") fail("messages[", i, "].content is null");
    ChatMessage message{role, openai_content(*content, i), ""};
    // A past assistant turn's reasoning, under any of the names tools write it.
    for (const char* key : {"reasoning_content", "reasoning", "thinking"}) {
      const auto it = turn.find(key);
      if (it == turn.end() || it->is_null()) continue;
      if (!it->is_string()) fail("messages[", i, "].", key, " is not a string");
      message.reasoning = it->get<std::string>();
      break;
    }
    conversation.push_back(std::move(message));
  }
  return cut_at_last_prompt_turn(std::move(conversation));
}

DatasetFormat detect_chat_format(const Json& record) {
  if (!record.is_object()) return DatasetFormat::Auto;
  const auto has_array = [&](const char* key) {
    const auto it = record.find(key);
    return it != record.end() && it->is_array();
  };
  if (has_array("conversations")) return DatasetFormat::ShareGpt;
  if (has_array("messages")) return DatasetFormat::OpenAiChat;
  return DatasetFormat::Auto;
}

}  // namespace sluice
