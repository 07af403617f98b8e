#include "app/server/request_gate.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "app/server/api_error.h"
#include "engine/core/error.h"

namespace sluice {

namespace {

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

ApiError bad_framing(const std::string& message) {
  return ApiError(400, "invalid_request_error", "bad_request_framing", "", message);
}

// Returns a Content-Length value as a number: 1*DIGIT (RFC 9110 §8.6), no sign, no list.
uint64_t content_length(std::string_view text) {
  const std::string_view value = trimmed(text);
  uint64_t length = 0;
  const bool is_digits = !value.empty() && std::all_of(value.begin(), value.end(),
                                                       [](char c) { return c >= '0' && c <= '9'; });
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), length);
  if (!is_digits || error != std::errc() || end != value.data() + value.size())
    throw bad_framing(str_cat("the Content-Length header '", std::string(text.substr(0, 64)),
                              "' is not a number of bytes"));
  return length;
}

}  // namespace

BodyFraming read_body_framing(std::span<const std::string> content_lengths,
                              std::span<const std::string> transfer_encodings) {
  if (content_lengths.size() > 1)
    throw bad_framing(
        str_cat("the request has ", content_lengths.size(), " Content-Length headers; send one"));
  if (transfer_encodings.size() > 1)
    throw bad_framing(str_cat("the request has ", transfer_encodings.size(),
                              " Transfer-Encoding headers; send one"));
  if (!transfer_encodings.empty() && !content_lengths.empty())
    throw bad_framing("the request has both Transfer-Encoding and Content-Length; send one");
  if (!transfer_encodings.empty()) {
    if (!equals_ignoring_case(trimmed(transfer_encodings[0]), "chunked"))
      throw ApiError(501, "invalid_request_error", "unsupported_transfer_encoding", "",
                     str_cat("the Transfer-Encoding '", transfer_encodings[0].substr(0, 64),
                             "' is not supported; send 'chunked' or a Content-Length"));
    return {BodyFraming::Kind::Chunked, 0};
  }
  if (!content_lengths.empty())
    return {BodyFraming::Kind::Length, content_length(content_lengths[0])};
  return {};
}

void check_body_size(const BodyFraming& framing, size_t max_body_bytes) {
  if (framing.kind == BodyFraming::Kind::Length && framing.length > max_body_bytes)
    throw body_too_large(max_body_bytes);
}

bool is_authorized(std::string_view authorization, std::string_view api_key) {
  constexpr std::string_view kScheme = "Bearer ";
  const size_t expected_size = kScheme.size() + api_key.size();
  // Every byte of the expected value is compared, and the differences are or-ed together
  // without an early exit: the loop runs as long for a wrong first byte as for a wrong last one
  // (volatile, so the compiler cannot turn it into an early exit either).
  volatile unsigned difference = authorization.size() == expected_size ? 0u : 1u;
  for (size_t i = 0; i < expected_size; ++i) {
    const char expected = i < kScheme.size() ? kScheme[i] : api_key[i - kScheme.size()];
    const char given = i < authorization.size() ? authorization[i] : '\0';
    difference = difference | static_cast<unsigned char>(expected ^ given);
  }
  return difference == 0;
}

uint64_t max_chunked_framing_bytes(size_t max_body_bytes) {
  return std::max<uint64_t>(max_body_bytes, uint64_t{64} << 10);
}

}  // namespace sluice
