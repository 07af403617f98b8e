// One turn of a conversation, with roles normalised to "system", "user" and "assistant"
// (ShareGPT's human/gpt become user/assistant).
#pragma once

#include <string>
#include <vector>

namespace sluice {

struct ChatMessage {
  std::string role;
  std::string content;
  // A past assistant turn's reasoning (a thinking model's; OpenAI messages' reasoning_content,
  // reasoning or thinking); "" for none. Chat templates see it under each of those names.
  std::string reasoning;

  bool operator==(const ChatMessage&) const = default;
};

using Conversation = std::vector<ChatMessage>;

}  // namespace sluice
