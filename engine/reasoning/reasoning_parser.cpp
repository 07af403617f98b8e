#include "engine/reasoning/reasoning_parser.h"

#include <algorithm>
#include <array>

namespace sluice {

namespace {

constexpr std::string_view kThinkOpen = "<think>";
constexpr std::string_view kThinkClose = "</think>";
constexpr std::string_view kThoughtOpen = "<|channel>thought";
constexpr std::string_view kThoughtClose = "<channel|>";

constexpr std::string_view kHarmonyStart = "<|start|>";
constexpr std::string_view kHarmonyChannel = "<|channel|>";
constexpr std::string_view kHarmonyMessage = "<|message|>";
// What ends a message's text: its end tags, or the next message's header.
constexpr std::array<std::string_view, 5> kHarmonyStops = {"<|end|>", "<|return|>", "<|call|>",
                                                           kHarmonyStart, kHarmonyChannel};
// A header longer than this without "<|message|>" is not a header: the text is the answer.
constexpr size_t kMaxHarmonyHeader = 256;

bool is_space(char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

std::string_view trim_right(std::string_view s) {
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

size_t first_non_space(std::string_view s) {
  for (size_t i = 0; i < s.size(); ++i) {
    if (!is_space(s[i])) return i;
  }
  return std::string_view::npos;
}

// The length of the longest end of text that is a proper prefix of tag (text may go on into it).
size_t partial_tag_suffix(std::string_view text, std::string_view tag) {
  for (size_t k = std::min(text.size(), tag.size() - 1); k > 0; --k) {
    if (text.substr(text.size() - k) == tag.substr(0, k)) return k;
  }
  return 0;
}

// The channel a Harmony header names: the word after "<|channel|>" ("analysis", "final",
// "commentary"), or "" when it names none.
std::string_view harmony_channel(std::string_view header) {
  const size_t at = header.rfind(kHarmonyChannel);
  if (at == std::string_view::npos) return {};
  std::string_view rest = header.substr(at + kHarmonyChannel.size());
  size_t end = 0;
  while (end < rest.size() && !is_space(rest[end]) && rest[end] != '<') ++end;
  return rest.substr(0, end);
}

}  // namespace

std::string_view reasoning_format_name(ReasoningFormat format) {
  switch (format) {
    case ReasoningFormat::None:
      return "none";
    case ReasoningFormat::ThinkTags:
      return "think";
    case ReasoningFormat::ThoughtChannel:
      return "thought-channel";
    case ReasoningFormat::Harmony:
      return "harmony";
  }
  return "none";
}

std::optional<ReasoningFormat> parse_reasoning_format(std::string_view name) {
  for (const ReasoningFormat f : {ReasoningFormat::None, ReasoningFormat::ThinkTags,
                                  ReasoningFormat::ThoughtChannel, ReasoningFormat::Harmony}) {
    if (name == reasoning_format_name(f)) return f;
  }
  return std::nullopt;
}

ReasoningFormat detect_reasoning_format(std::string_view template_source) {
  if (template_source.find(kHarmonyChannel) != std::string_view::npos)
    return ReasoningFormat::Harmony;
  if (template_source.find(kThoughtOpen) != std::string_view::npos)
    return ReasoningFormat::ThoughtChannel;
  if (template_source.find(kThinkOpen) != std::string_view::npos) return ReasoningFormat::ThinkTags;
  return ReasoningFormat::None;
}

bool prompt_opens_reasoning(ReasoningFormat format, std::string_view prompt) {
  switch (format) {
    case ReasoningFormat::ThinkTags:
    case ReasoningFormat::ThoughtChannel: {
      const bool think = format == ReasoningFormat::ThinkTags;
      const std::string_view open_tag = think ? kThinkOpen : kThoughtOpen;
      const std::string_view close_tag = think ? kThinkClose : kThoughtClose;
      const size_t open = prompt.rfind(open_tag);
      return open != std::string_view::npos &&
             prompt.find(close_tag, open + open_tag.size()) == std::string_view::npos;
    }
    case ReasoningFormat::Harmony: {
      const size_t message = prompt.rfind(kHarmonyMessage);
      if (message == std::string_view::npos) return false;
      // The last message's header: from its "<|start|>" (or the prompt's start) to "<|message|>".
      const size_t start = prompt.substr(0, message).rfind(kHarmonyStart);
      const size_t header = start == std::string_view::npos ? 0 : start;
      if (harmony_channel(prompt.substr(header, message - header)) != "analysis") return false;
      const std::string_view text = prompt.substr(message + kHarmonyMessage.size());
      return std::none_of(kHarmonyStops.begin(), kHarmonyStops.end(), [&](std::string_view stop) {
        return text.find(stop) != std::string_view::npos;
      });
    }
    case ReasoningFormat::None:
      return false;
  }
  return false;
}

ReasoningStream::ReasoningStream(ReasoningFormat format, bool starts_in_reasoning)
    : format_(format),
      open_(format == ReasoningFormat::ThoughtChannel ? kThoughtOpen : kThinkOpen),
      close_(format == ReasoningFormat::ThoughtChannel ? kThoughtClose : kThinkClose) {
  if (format == ReasoningFormat::None) {
    state_ = State::Answer;
  } else if (starts_in_reasoning) {
    state_ = State::Reasoning;
  } else {
    state_ = format == ReasoningFormat::Harmony ? State::HarmonyHead : State::Start;
  }
  new_message_ = format == ReasoningFormat::Harmony;
}

ReasoningSplit ReasoningStream::feed(std::string_view chunk) {
  pending_.append(chunk);
  ReasoningSplit out;
  if (format_ == ReasoningFormat::Harmony) {
    feed_harmony(out);
  } else {
    feed_tag_pair(out);
  }
  return out;
}

ReasoningSplit ReasoningStream::finish() {
  ReasoningSplit out;
  switch (state_) {
    case State::Start:
    case State::Answer:
      emit_answer(pending_, out);  // whitespace, or a tag's start that never completed
      break;
    case State::Reasoning:
      emit_reasoning(trim_right(pending_), out);
      break;
    case State::AfterClose:
    case State::HarmonyHead:  // a header no message followed
      break;
  }
  pending_.clear();
  return out;
}

void ReasoningStream::feed_tag_pair(ReasoningSplit& out) {
  for (;;) {
    switch (state_) {
      case State::Start: {
        const size_t i = first_non_space(pending_);
        if (i == std::string_view::npos) return;  // only whitespace so far
        const std::string_view rest = std::string_view(pending_).substr(i);
        if (rest.starts_with(open_)) {
          pending_.erase(0, i + open_.size());
          state_ = State::Reasoning;
          continue;
        }
        if (open_.starts_with(rest)) return;  // the opening tag may be arriving
        state_ = State::Answer;
        continue;
      }
      case State::Reasoning: {
        const size_t close = pending_.find(close_);
        if (close != std::string::npos) {
          emit_reasoning(trim_right(std::string_view(pending_).substr(0, close)), out);
          pending_.erase(0, close + close_.size());
          state_ = State::AfterClose;
          continue;
        }
        // Hold a possible start of the closing tag and the whitespace before it.
        size_t keep = pending_.size() - partial_tag_suffix(pending_, close_);
        while (keep > 0 && is_space(pending_[keep - 1])) --keep;
        emit_reasoning(std::string_view(pending_).substr(0, keep), out);
        pending_.erase(0, keep);
        return;
      }
      case State::AfterClose: {
        const size_t i = first_non_space(pending_);
        if (i == std::string_view::npos) {
          pending_.clear();
          return;
        }
        pending_.erase(0, i);
        state_ = State::Answer;
        continue;
      }
      case State::Answer:
        emit_answer(pending_, out);
        pending_.clear();
        return;
      case State::HarmonyHead:
        return;  // not a state of this format
    }
  }
}

void ReasoningStream::feed_harmony(ReasoningSplit& out) {
  for (;;) {
    if (state_ == State::HarmonyHead) {
      // A header starts with a tag; text that does not is the answer, whatever follows it.
      const size_t i = first_non_space(pending_);
      if (i == std::string_view::npos) return;
      const std::string_view rest = std::string_view(pending_).substr(i);
      const size_t message = pending_.find(kHarmonyMessage);
      if ((rest.starts_with("<|") || rest == "<") &&
          (message == std::string::npos || message <= kMaxHarmonyHeader)) {
        if (message == std::string::npos) {
          if (pending_.size() < kMaxHarmonyHeader + kHarmonyMessage.size()) return;  // arriving
        } else {
          const bool analysis =
              harmony_channel(std::string_view(pending_).substr(0, message)) == "analysis";
          pending_.erase(0, message + kHarmonyMessage.size());
          state_ = analysis ? State::Reasoning : State::Answer;
          block_started_ = false;
          new_message_ = true;
          continue;
        }
      }
      state_ = State::Answer;  // text without a header: the answer
      new_message_ = true;
      header_refused_ = true;
      continue;
    }
    // A message's text, to its first stop. Right after HarmonyHead refused the text as a header,
    // a header's tag at its first byte is that text, not a stop.
    size_t stop = std::string::npos;
    size_t stop_length = 0;
    for (const std::string_view tag : kHarmonyStops) {
      const bool is_header = tag == kHarmonyStart || tag == kHarmonyChannel;
      const size_t at = pending_.find(tag, is_header && header_refused_ ? 1 : 0);
      if (at < stop) stop = at, stop_length = tag.size();
    }
    const bool reasoning = state_ == State::Reasoning;
    if (stop != std::string::npos) {
      const std::string_view text = std::string_view(pending_).substr(0, stop);
      if (reasoning) {
        emit_reasoning(trim_right(text), out);
      } else {
        emit_answer(text, out);
      }
      // An end tag is consumed; the next header's tags stay for HarmonyHead to read.
      const std::string_view tag = std::string_view(pending_).substr(stop, stop_length);
      const bool is_header = tag == kHarmonyStart || tag == kHarmonyChannel;
      pending_.erase(0, is_header ? stop : stop + stop_length);
      header_refused_ = false;  // stop >= 1 when it is a header's: text was consumed
      state_ = State::HarmonyHead;
      continue;
    }
    size_t keep = pending_.size();
    for (const std::string_view tag : kHarmonyStops)
      keep = std::min(keep, pending_.size() - partial_tag_suffix(pending_, tag));
    if (reasoning) {
      while (keep > 0 && is_space(pending_[keep - 1])) --keep;
      emit_reasoning(std::string_view(pending_).substr(0, keep), out);
    } else {
      emit_answer(std::string_view(pending_).substr(0, keep), out);
    }
    pending_.erase(0, keep);
    if (keep > 0) header_refused_ = false;
    return;
  }
}

void ReasoningStream::emit_reasoning(std::string_view text, ReasoningSplit& out) {
  if (!block_started_) {
    const size_t i = first_non_space(text);
    if (i == std::string_view::npos) return;
    text.remove_prefix(i);
    if (any_reasoning_) out.reasoning += '\n';
    block_started_ = true;
    any_reasoning_ = true;
  }
  out.reasoning.append(text);
}

void ReasoningStream::emit_answer(std::string_view text, ReasoningSplit& out) {
  if (text.empty()) return;
  if (new_message_) {
    if (any_answer_) out.answer += '\n';
    new_message_ = false;
  }
  any_answer_ = true;
  out.answer.append(text);
}

ReasoningSplit split_reasoning(ReasoningFormat format, bool starts_in_reasoning,
                               std::string_view output) {
  ReasoningStream stream(format, starts_in_reasoning);
  ReasoningSplit split = stream.feed(output);
  ReasoningSplit rest = stream.finish();
  split.reasoning += rest.reasoning;
  split.answer += rest.answer;
  return split;
}

}  // namespace sluice
