// One turn of a conversation, with roles normalised to "system", "user" and "assistant"
// (ShareGPT's human/gpt become user/assistant).
#pragma once

#include <string>
#include <vector>

namespace sluice {

struct ChatMessage {
  std::string role;
  std::string content;

  bool operator==(const ChatMessage&) const = default;
};

using Conversation = std::vector<ChatMessage>;

}  // namespace sluice
