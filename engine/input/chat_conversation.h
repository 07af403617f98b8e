// Chat records as conversations to continue: ShareGPT ({"conversations": [{"from", "value"}]})
// and OpenAI messages ({"messages": [{"role", "content"}]}). Roles are normalised to system /
// user / assistant, and the conversation stops at its last non-assistant turn, because trailing
// assistant turns are the reference answers that the model is asked to produce again.
#pragma once

#include <nlohmann/json.hpp>

#include "engine/core/chat_message.h"
#include "engine/input/dataset_format.h"

namespace sluice {

// Returns the conversation of a ShareGPT record, up to and including its last non-assistant
// turn (a top-level "system" string becomes the first turn). Throws Error describing the
// problem (no file or line; the reader adds them).
Conversation sharegpt_conversation(const nlohmann::ordered_json& record);

// Returns the conversation of an OpenAI chat record (string content, or an array of text
// parts), up to and including its last non-assistant turn. Throws Error as above.
Conversation openai_conversation(const nlohmann::ordered_json& record);

// Returns ShareGpt when record has a "conversations" array, else OpenAiChat when it has a
// "messages" array, otherwise Auto. The turns are not looked at: a record with a malformed turn
// is still the chat record it tries to be, and its reader reports the turn.
DatasetFormat detect_chat_format(const nlohmann::ordered_json& record);

}  // namespace sluice
