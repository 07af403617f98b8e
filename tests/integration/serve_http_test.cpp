// `sluice serve` over raw sockets, for what httplib's client would tidy up (issue 27): requests
// sent back to back in one packet, chunked uploads, a key checked before the body is read,
// framing headers that two parsers could read two ways, a head without end.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tests/integration/serve_process.h"

namespace sluice::test {
namespace {

using Json = nlohmann::json;
using ::testing::HasSubstr;

constexpr const char* kKey = "k3y";
constexpr size_t kMaxBodyBytes = size_t{1} << 20;

class ServeHttp : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = new ServeProcess({"--api-key", kKey, "--max-body-bytes", "1M"});
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  static ServeProcess* server_;
};

ServeProcess* ServeHttp::server_ = nullptr;

std::string auth_header() {
  return std::string("Authorization: Bearer ") + kKey + "\r\n";
}

// A POST with its body, framed by Content-Length.
std::string post(const std::string& path, const std::string& body,
                 const std::string& extra_headers = "") {
  return "POST " + path + " HTTP/1.1\r\nHost: x\r\n" + auth_header() + extra_headers +
         "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\n\r\n" + body;
}

// Expects a JSON error response with this status, and that the server then closes the
// connection (the bytes after the head cannot be trusted to start the next request).
void expect_refusal_and_close(RawConnection& c, int status, const std::string& message_part) {
  const auto response = c.read_response();
  ASSERT_TRUE(response) << "no response";
  EXPECT_EQ(response->status, status) << response->body;
  EXPECT_EQ(response->header("connection"), "close");
  const Json body = Json::parse(response->body, nullptr, false);
  ASSERT_TRUE(body.contains("error")) << response->body;
  EXPECT_THAT(body["error"]["message"].get<std::string>(), HasSubstr(message_part));
  EXPECT_TRUE(c.is_closed_by_server());
}

// Issue 27 item 8: only the first of several requests sent in one packet was answered; the
// rest were lost with httplib's per-request read buffer and the connection idled 5 s.
TEST_F(ServeHttp, PipelinedRequestsAreAnsweredInOrder) {
  RawConnection c(server_->port());
  const std::string completion = R"({"model": "stories", "prompt": "Once", "max_tokens": 4})";
  ASSERT_TRUE(
      c.send("GET /health HTTP/1.1\r\nHost: x\r\n\r\n" + post("/v1/completions", completion) +
             post("/tokenize", R"({"prompt": "Hi"})") + "GET /v1/models HTTP/1.1\r\nHost: x\r\n" +
             auth_header() + "Connection: close\r\n\r\n"));
  const auto health = c.read_response();
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  const auto answer = c.read_response();
  ASSERT_TRUE(answer) << "the second request was not answered";
  ASSERT_EQ(answer->status, 200) << answer->body;
  EXPECT_EQ(Json::parse(answer->body)["usage"]["completion_tokens"], 4);
  const auto tokens = c.read_response();
  ASSERT_TRUE(tokens) << "the third request was not answered";
  ASSERT_EQ(tokens->status, 200) << tokens->body;
  EXPECT_EQ(Json::parse(tokens->body)["tokens"][0], 1);  // BOS
  const auto models = c.read_response();
  ASSERT_TRUE(models) << "the fourth request was not answered";
  ASSERT_EQ(models->status, 200) << models->body;
  EXPECT_EQ(Json::parse(models->body)["data"][0]["id"], kModel);
  EXPECT_EQ(models->header("connection"), "close");
  EXPECT_TRUE(c.is_closed_by_server());
}

// A request refused with a 400 whose body was read keeps its connection: the next request on it
// is answered.
TEST_F(ServeHttp, AnErrorWithItsBodyReadKeepsTheConnection) {
  RawConnection c(server_->port());
  ASSERT_TRUE(c.send(post("/v1/completions", R"({"model": "stories", "prompt": )") +
                     post("/v1/completions", R"({"model": "stories", "prompt": "Hi",
                                                 "max_tokens": 2})")));
  const auto bad = c.read_response();
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  EXPECT_NE(bad->header("connection"), "close");
  const auto good = c.read_response();
  ASSERT_TRUE(good);
  EXPECT_EQ(good->status, 200) << good->body;
}

// Issue 27 item 2: a 1 GiB chunked upload without a key was read whole (+1.08 GB) before the
// 401. The key is checked on the head: the refusal comes before any byte of the body is sent.
TEST_F(ServeHttp, TheKeyIsCheckedBeforeTheBodyIsRead) {
  {
    RawConnection c(server_->port());
    ASSERT_TRUE(
        c.send("POST /v1/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
               "Content-Type: application/json\r\n\r\n"));
    expect_refusal_and_close(c, 401, "API key");
  }
  {
    RawConnection c(server_->port());
    ASSERT_TRUE(
        c.send("POST /v1/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer nope\r\n"
               "Content-Length: 1000000\r\n\r\n"));
    expect_refusal_and_close(c, 401, "API key");
  }
  {
    // A client that asks before sending hears the refusal instead of "100 Continue".
    RawConnection c(server_->port());
    ASSERT_TRUE(
        c.send("POST /v1/completions HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
               "Content-Length: 1000\r\n\r\n"));
    expect_refusal_and_close(c, 401, "API key");
  }
}

// Issue 27 item 2: chunked bodies bypassed --max-body-bytes. They are counted as they arrive:
// 413 at the limit, whatever the chunks' sizes (the framing's bytes are capped too).
TEST_F(ServeHttp, AChunkedBodyPastTheLimitIs413) {
  // 1-byte chunks take 6 bytes each: 400 KB of them pass the limit of body and framing.
  for (const auto& [body_bytes, chunk_bytes] :
       {std::pair{2 * kMaxBodyBytes, size_t{65536}}, std::pair{size_t{400000}, size_t{1}}}) {
    const std::string body =
        R"({"model": "stories", "prompt": ")" + std::string(body_bytes, 'x') + "\"}";
    RawConnection c(server_->port());
    // The server answers once the limit is reached and may close before the rest is sent.
    c.send("POST /v1/completions HTTP/1.1\r\nHost: x\r\n" + auth_header() +
           "Transfer-Encoding: chunked\r\n\r\n" + chunked(body, chunk_bytes));
    expect_refusal_and_close(c, 413, std::to_string(kMaxBodyBytes) + " bytes");
  }
  // Within the limit, a chunked body is read as any other.
  RawConnection c(server_->port());
  ASSERT_TRUE(c.send("POST /v1/completions HTTP/1.1\r\nHost: x\r\n" + auth_header() +
                     "Transfer-Encoding: chunked\r\n\r\n" +
                     chunked(R"({"model": "stories", "prompt": "Once", "max_tokens": 3})", 7)));
  const auto response = c.read_response();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 200) << response->body;
}

// A Content-Length past the limit is refused from the head, before the body is sent.
TEST_F(ServeHttp, AContentLengthPastTheLimitIs413BeforeTheBody) {
  RawConnection c(server_->port());
  ASSERT_TRUE(c.send("POST /v1/completions HTTP/1.1\r\nHost: x\r\n" + auth_header() +
                     "Content-Length: " + std::to_string(kMaxBodyBytes + 1) + "\r\n\r\n"));
  expect_refusal_and_close(c, 413, std::to_string(kMaxBodyBytes) + " bytes");
}

// Issue 27 item 10: Content-Length -1 got 413; two Content-Lengths, or Transfer-Encoding beside
// Content-Length, were accepted (RFC 9112 §6.3 asks a server to refuse them: a proxy in front
// could split the same bytes into other requests).
TEST_F(ServeHttp, FramingThatCanBeReadTwoWaysIs400) {
  const std::string body = R"({"prompt": "Hi"})";
  const std::string size = std::to_string(body.size());
  const struct {
    std::string headers;
    std::string request_body;
    int status;
    const char* message_part;
  } cases[] = {
      {"Content-Length: -1\r\n", body, 400, "'-1' is not a number of bytes"},
      {"Content-Length: " + size + "\r\nContent-Length: " + size + "\r\n", body, 400,
       "2 Content-Length headers"},
      {"Transfer-Encoding: chunked\r\nContent-Length: " + size + "\r\n", chunked(body, 4), 400,
       "both Transfer-Encoding and Content-Length"},
      {"Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n", chunked(body, 4), 400,
       "2 Transfer-Encoding headers"},
      {"Transfer-Encoding: gzip, chunked\r\n", body, 501, "'gzip, chunked' is not supported"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.headers);
    RawConnection connection(server_->port());
    ASSERT_TRUE(connection.send("POST /tokenize HTTP/1.1\r\nHost: x\r\n" + auth_header() +
                                c.headers + "\r\n" + c.request_body));
    expect_refusal_and_close(connection, c.status, c.message_part);
  }
}

// A request with neither Content-Length nor Transfer-Encoding has no body (RFC 9112 §6.3);
// httplib read such a body until the client closed the connection.
TEST_F(ServeHttp, APostWithoutFramingHasAnEmptyBody) {
  RawConnection c(server_->port());
  ASSERT_TRUE(c.send("POST /tokenize HTTP/1.1\r\nHost: x\r\n" + auth_header() + "\r\n" +
                     "GET /health HTTP/1.1\r\nHost: x\r\n\r\n"));
  const auto response = c.read_response();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 400);
  EXPECT_THAT(response->body, HasSubstr("not valid JSON"));
  const auto health = c.read_response();
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
}

// A header line without end grew the server's line buffer for as long as the client sent it.
TEST_F(ServeHttp, AHeadPastItsLimitIs431) {
  {
    RawConnection c(server_->port());
    c.send("GET /health HTTP/1.1\r\nHost: x\r\nX-Long: " + std::string(100000, 'a'));
    expect_refusal_and_close(c, 431, "65536 bytes");
  }
  {
    RawConnection c(server_->port());
    c.send("GET /" + std::string(100000, 'a'));
    expect_refusal_and_close(c, 431, "65536 bytes");
  }
  std::string many_headers = "GET /health HTTP/1.1\r\nHost: x\r\n";
  for (int i = 0; i < 10000; ++i) many_headers += "X-" + std::to_string(i) + ": y\r\n";
  RawConnection c(server_->port());
  c.send(many_headers + "\r\n");
  expect_refusal_and_close(c, 431, "65536 bytes");
  EXPECT_EQ(server_->client().Get("/health")->status, 200);
}

}  // namespace
}  // namespace sluice::test
