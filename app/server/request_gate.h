// What the server decides from a request's head alone, before it reads a byte of the body: how
// the body is framed (RFC 9112 §6), whether the client holds the API key, and whether the body
// can fit --max-body-bytes. A request refused here is answered at once and its connection closed,
// so a client without the key, or with a body past the limit, never makes the server read (or
// hold) that body. Pure functions of header values, so tests can check every case.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace sluice {

// How a request's body is delimited.
struct BodyFraming {
  enum class Kind { None, Length, Chunked };
  Kind kind = Kind::None;  // None: no body (a request without either header has none)
  uint64_t length = 0;     // Kind::Length: the Content-Length

  bool has_body() const { return kind == Kind::Chunked || (kind == Kind::Length && length > 0); }
};

// Returns the framing named by a request's Content-Length and Transfer-Encoding header values
// (every value the request sent, repeated headers included). Throws ApiError: 400 for more than
// one Content-Length, one that is not a decimal number of bytes (such as -1), Transfer-Encoding
// beside Content-Length, or more than one Transfer-Encoding (RFC 9112 §6.3 asks a server to
// refuse these: two parsers could split the bytes into different requests); 501 for a transfer
// coding other than chunked.
BodyFraming read_body_framing(std::span<const std::string> content_lengths,
                              std::span<const std::string> transfer_encodings);

// Throws ApiError 413 when a Content-Length is past max_body_bytes (a chunked body is counted
// as it is read).
void check_body_size(const BodyFraming& framing, size_t max_body_bytes);

// True when authorization is "Bearer <api_key>". It looks at every byte of the expected value
// whatever the client sent, so the time a refusal takes does not tell a client how many leading
// bytes of its guess were right.
bool is_authorized(std::string_view authorization, std::string_view api_key);

// The bytes a chunked body's framing (chunk sizes, extensions, line ends) may add to a body of
// max_body_bytes before the connection is cut: as many again, and 64 KiB for a small limit.
uint64_t max_chunked_framing_bytes(size_t max_body_bytes);

}  // namespace sluice
