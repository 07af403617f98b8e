// The checks the server makes on a request's head before it reads the body (request_gate.h):
// the body's framing as RFC 9112 §6 asks, the size limit, the API key.
#include "app/server/request_gate.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "app/server/api_error.h"

namespace sluice {
namespace {

using Values = std::vector<std::string>;

// Returns the status of the ApiError that read_body_framing throws (0 when it accepts).
int framing_status(const Values& content_lengths, const Values& transfer_encodings) {
  try {
    read_body_framing(content_lengths, transfer_encodings);
    return 0;
  } catch (const ApiError& e) {
    return e.status();
  }
}

TEST(RequestGate, ReadsTheBodysFraming) {
  EXPECT_EQ(read_body_framing({}, {}).kind, BodyFraming::Kind::None);
  EXPECT_FALSE(read_body_framing({}, {}).has_body());
  const BodyFraming length = read_body_framing(Values{"42"}, {});
  EXPECT_EQ(length.kind, BodyFraming::Kind::Length);
  EXPECT_EQ(length.length, 42u);
  EXPECT_TRUE(length.has_body());
  EXPECT_FALSE(read_body_framing(Values{"0"}, {}).has_body());
  EXPECT_EQ(read_body_framing(Values{" 7 "}, {}).length, 7u);  // optional whitespace
  EXPECT_EQ(read_body_framing({}, Values{"chunked"}).kind, BodyFraming::Kind::Chunked);
  EXPECT_EQ(read_body_framing({}, Values{"Chunked"}).kind, BodyFraming::Kind::Chunked);
  EXPECT_TRUE(read_body_framing({}, Values{"chunked"}).has_body());
}

// Issue 27 item 10: Content-Length -1 got 413 (parsed as a huge number); duplicates, and
// Transfer-Encoding beside Content-Length, were accepted.
TEST(RequestGate, RefusesFramingThatTwoParsersCouldReadTwoWays) {
  EXPECT_EQ(framing_status(Values{"-1"}, {}), 400);
  EXPECT_EQ(framing_status(Values{"+5"}, {}), 400);
  EXPECT_EQ(framing_status(Values{"5, 5"}, {}), 400);
  EXPECT_EQ(framing_status(Values{""}, {}), 400);
  EXPECT_EQ(framing_status(Values{"0x10"}, {}), 400);
  EXPECT_EQ(framing_status(Values{"99999999999999999999999"}, {}), 400);  // past 64 bits
  EXPECT_EQ(framing_status(Values{"5", "5"}, {}), 400);
  EXPECT_EQ(framing_status(Values{"5", "6"}, {}), 400);
  EXPECT_EQ(framing_status(Values{"5"}, Values{"chunked"}), 400);
  EXPECT_EQ(framing_status({}, Values{"chunked", "chunked"}), 400);
  EXPECT_EQ(framing_status({}, Values{"gzip, chunked"}), 501);
  EXPECT_EQ(framing_status({}, Values{"identity"}), 501);
  try {
    read_body_framing(Values{"-1"}, {});
    FAIL() << "accepted Content-Length -1";
  } catch (const ApiError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("Content-Length"));
    EXPECT_THAT(e.what(), ::testing::HasSubstr("'-1'"));
  }
  try {
    read_body_framing(Values{"3"}, Values{"chunked"});
    FAIL() << "accepted both headers";
  } catch (const ApiError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("Transfer-Encoding and Content-Length"));
  }
}

TEST(RequestGate, ABodyPastTheLimitIs413FromItsLength) {
  EXPECT_NO_THROW(check_body_size(read_body_framing(Values{"100"}, {}), 100));
  try {
    check_body_size(read_body_framing(Values{"101"}, {}), 100);
    FAIL() << "accepted 101 bytes past a 100-byte limit";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status(), 413);
    EXPECT_THAT(e.what(), ::testing::HasSubstr("100 bytes"));
  }
  // A chunked body has no length to check yet: it is counted as it is read.
  EXPECT_NO_THROW(check_body_size(read_body_framing({}, Values{"chunked"}), 100));
  EXPECT_GE(max_chunked_framing_bytes(100), uint64_t{64} << 10);
  EXPECT_EQ(max_chunked_framing_bytes(size_t{8} << 20), uint64_t{8} << 20);
}

TEST(RequestGate, TheKeyMustMatchEveryByte) {
  EXPECT_TRUE(is_authorized("Bearer s3cret", "s3cret"));
  EXPECT_FALSE(is_authorized("Bearer s3creT", "s3cret"));
  EXPECT_FALSE(is_authorized("Bearer s3cre", "s3cret"));    // a prefix
  EXPECT_FALSE(is_authorized("Bearer s3cretX", "s3cret"));  // longer
  EXPECT_FALSE(is_authorized(std::string("Bearer s3cret\0", 14), "s3cret"));
  EXPECT_FALSE(is_authorized("bearer s3cret", "s3cret"));
  EXPECT_FALSE(is_authorized("s3cret", "s3cret"));
  EXPECT_FALSE(is_authorized("", "s3cret"));
  EXPECT_FALSE(is_authorized("Bearer ", "s3cret"));
}

}  // namespace
}  // namespace sluice
