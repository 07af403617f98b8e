// RemoteDriver against the fake OpenAI server (tests/support/fake_openai_server.h): answers come
// back as FinishedRequests; 429 (with its Retry-After), 500, dropped connections, timeouts and
// malformed answers and endless bodies (cut off at a limit) are retried; a 400 is not; a request
// that keeps failing finishes with an error naming the endpoint; a dead endpoint's requests move to
// the live one; the concurrency cap holds; abort cuts an in-flight request; the start-up check
// names a wrong model or key.
#include "app/remote/remote_driver.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>

#include "engine/core/error.h"
#include "tests/support/fake_openai_server.h"
#include "tests/unit/remote/null_content_server.h"

namespace sluice::test {
namespace {

using ::testing::HasSubstr;
using Fault = FakeOpenAiServer::Fault;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

RemoteSpec spec_for(const std::vector<std::string>& urls, int retries = 5) {
  RemoteSpec spec;
  spec.endpoints = urls;
  spec.concurrency = 4;
  spec.retries = retries;
  spec.request_timeout_s = 30;
  return spec;
}

ServiceRequest chat(const std::string& text, int n = 1) {
  ServiceRequest r;
  r.is_chat = true;
  r.messages = {{"user", text}};
  r.sampling.n = n;
  return r;
}

// Waits for every sample of the handle; returns them by index.
std::vector<FinishedRequest> finish(RequestHandle& handle) {
  std::vector<FinishedRequest> out(handle.stream().num_samples());
  const auto deadline = Clock::now() + 60s;
  while (!handle.stream().is_drained()) {
    if (Clock::now() > deadline) throw std::runtime_error("no answer within a minute");
    if (auto event = handle.stream().pop(Clock::now() + 100ms); event && event->is_finished)
      out[event->finished.sample_idx] = event->finished;
  }
  return out;
}

TEST(RemoteDriver, AnswersComeBackAsFinishedSamplesWithTheirOwnSeeds) {
  FakeOpenAiServer fake;
  RemoteDriver driver(spec_for({fake.url()}));
  EXPECT_EQ(driver.model(), "fake");  // the servers' only model
  ServiceRequest request = chat("hello", 3);
  request.sample_key = 42;
  auto handle = driver.submit(request);
  const auto samples = finish(*handle);
  std::set<uint64_t> seeds;
  for (const FinishedRequest& f : samples) {
    EXPECT_EQ(f.output_text, FakeOpenAiServer::answer_to("hello"));
    EXPECT_EQ(f.finish_reason, FinishReason::Stop);
    EXPECT_EQ(f.num_prompt_tokens, 7);
    EXPECT_EQ(f.num_output_tokens, 3);
  }
  for (const auto& seen : fake.seen()) {
    if (seen.path == "/v1/chat/completions") seeds.insert(seen.body["seed"].get<uint64_t>());
  }
  EXPECT_EQ(seeds.size(), 3u);  // one request per sample, each its own seed
  EXPECT_TRUE(seeds.count(RemoteDriver::sample_seed(0, 42, 1)));
  const ServiceMetrics m = driver.metrics();
  EXPECT_EQ(m.num_requests_finished, 1);
  EXPECT_EQ(m.num_generation_tokens, 9);
}

TEST(RemoteDriver, TransientFaultsAreRetriedUntilTheAnswerComes) {
  FakeOpenAiServer fake("fake", "0");
  fake.script({Fault::ServerError, Fault::Drop, Fault::Malformed, Fault::TooManyRequests});
  RemoteDriver driver(spec_for({fake.url()}));
  auto handle = driver.submit(chat("persist"));
  const auto samples = finish(*handle);
  EXPECT_EQ(samples[0].finish_reason, FinishReason::Stop) << samples[0].error;
  EXPECT_EQ(samples[0].output_text, FakeOpenAiServer::answer_to("persist"));
  size_t completions = 0;
  for (const auto& seen : fake.seen()) completions += seen.path == "/v1/chat/completions";
  EXPECT_EQ(completions, 5u);  // four faults, then the answer
}

TEST(RemoteDriver, RetryAfterIsHonouredBeforeTheNextAttempt) {
  FakeOpenAiServer fake("fake", "1");
  fake.script({Fault::TooManyRequests});
  RemoteDriver driver(spec_for({fake.url()}));
  auto handle = driver.submit(chat("later"));
  EXPECT_EQ(finish(*handle)[0].finish_reason, FinishReason::Stop);
  std::vector<Clock::time_point> times;
  for (const auto& seen : fake.seen()) {
    if (seen.path == "/v1/chat/completions") times.push_back(seen.when);
  }
  ASSERT_EQ(times.size(), 2u);
  EXPECT_GE(times[1] - times[0], 950ms);  // "Retry-After: 1"
}

TEST(RemoteDriver, ARefusedRequestFailsAtOnceWithTheServersMessage) {
  FakeOpenAiServer fake;
  fake.script({Fault::BadRequest});
  RemoteDriver driver(spec_for({fake.url()}));
  auto handle = driver.submit(chat("refused"));
  const FinishedRequest f = finish(*handle)[0];
  EXPECT_EQ(f.finish_reason, FinishReason::Error);
  EXPECT_THAT(f.error, HasSubstr(fake.url()));
  EXPECT_THAT(f.error, HasSubstr("HTTP 400: the fake server refuses this request"));
  EXPECT_EQ(fake.seen().size(), 1u);  // the one attempt, not retried
}

TEST(RemoteDriver, ARequestThatKeepsFailingEndsWithTheLastErrorAfterItsRetries) {
  FakeOpenAiServer fake;
  RemoteDriver driver(spec_for({fake.url()}, 2));
  auto handle = driver.submit(chat("ALWAYS-500 please"));
  const FinishedRequest f = finish(*handle)[0];
  EXPECT_EQ(f.finish_reason, FinishReason::Error);
  EXPECT_THAT(f.error, HasSubstr("HTTP 500: the fake server broke"));
  EXPECT_THAT(f.error, HasSubstr("gave up after 3 attempts"));
}

// A server that sends a body without end is cut off at max_answer_bytes (httplib alone would
// read it into memory until the request timed out), and the attempt counts as a failure.
TEST(RemoteDriver, AnEndlessAnswerIsCutOffAtTheLimitAndRetried) {
  FakeOpenAiServer fake("fake", "0");
  fake.script({Fault::Endless});
  RemoteSpec spec = spec_for({fake.url()});
  spec.max_answer_bytes = int64_t{1} << 20;
  RemoteDriver driver(spec);
  auto handle = driver.submit(chat("endless once"));
  const FinishedRequest f = finish(*handle)[0];
  EXPECT_EQ(f.finish_reason, FinishReason::Stop) << f.error;
  EXPECT_EQ(f.output_text, FakeOpenAiServer::answer_to("endless once"));
}

TEST(RemoteDriver, AnAnswerThatIsAlwaysTooLongFailsTheRowNamingTheLimit) {
  FakeOpenAiServer fake("fake", "0");
  RemoteSpec spec = spec_for({fake.url()}, 1);
  spec.max_answer_bytes = int64_t{1} << 20;
  spec.request_timeout_s = 5;
  RemoteDriver driver(spec);
  auto handle = driver.submit(chat("ALWAYS-ENDLESS"));
  const FinishedRequest f = finish(*handle)[0];
  EXPECT_EQ(f.finish_reason, FinishReason::Error);
  EXPECT_THAT(f.error, HasSubstr(fake.url()));
  EXPECT_THAT(f.error, HasSubstr("the answer was longer than 1024 KiB; cut off there"));
  EXPECT_THAT(f.error, HasSubstr("gave up after 2 attempts"));
}

TEST(RemoteDriver, ADeadEndpointsRequestsFinishOnTheLiveOne) {
  FakeOpenAiServer live;
  std::string dead_url;
  {
    FakeOpenAiServer soon_dead;
    dead_url = soon_dead.url();
  }  // nothing listens there any more
  std::vector<std::string> notes;
  std::mutex notes_mutex;
  RemoteDriver driver(spec_for({dead_url, live.url()}), [&](const std::string& text) {
    const std::lock_guard lock(notes_mutex);
    notes.push_back(text);
  });
  std::vector<std::unique_ptr<RequestHandle>> handles;
  for (int i = 0; i < 20; ++i) handles.push_back(driver.submit(chat("row " + std::to_string(i))));
  for (int i = 0; i < 20; ++i) {
    const FinishedRequest f = finish(*handles[i])[0];
    EXPECT_EQ(f.output_text, FakeOpenAiServer::answer_to("row " + std::to_string(i))) << f.error;
  }
  const std::lock_guard lock(notes_mutex);
  ASSERT_FALSE(notes.empty());
  EXPECT_THAT(notes.front(), HasSubstr(dead_url));
  EXPECT_THAT(notes.front(), HasSubstr("out of the rotation"));
}

TEST(RemoteDriver, NoMoreRequestsInFlightThanTheConcurrencyCap) {
  FakeOpenAiServer fake;
  fake.set_slow_seconds(0.05);
  std::vector<Fault> slow(40, Fault::Slow);
  fake.script(slow);
  RemoteSpec spec = spec_for({fake.url()});
  spec.concurrency = 3;
  RemoteDriver driver(spec);
  std::vector<std::unique_ptr<RequestHandle>> handles;
  for (int i = 0; i < 40; ++i) handles.push_back(driver.submit(chat("x")));
  for (auto& h : handles) EXPECT_EQ(finish(*h)[0].finish_reason, FinishReason::Stop);
  EXPECT_EQ(fake.max_in_flight(), 3);
}

TEST(RemoteDriver, RequestsPerMinuteSpaceTheRequestsOut) {
  FakeOpenAiServer fake;
  RemoteSpec spec = spec_for({fake.url()});
  spec.requests_per_minute = 120;  // two a second; the first second's two go at once
  RemoteDriver driver(spec);
  std::vector<std::unique_ptr<RequestHandle>> handles;
  for (int i = 0; i < 5; ++i) handles.push_back(driver.submit(chat(std::to_string(i))));
  for (auto& h : handles) EXPECT_EQ(finish(*h)[0].finish_reason, FinishReason::Stop);
  const auto seen = fake.seen();
  ASSERT_EQ(seen.size(), 5u);
  // Three more after the first two, half a second apart at least (a lower bound: a slow
  // machine only spreads them further).
  EXPECT_GE(seen[4].when - seen[0].when, 1400ms);
  EXPECT_GE(seen[2].when - seen[1].when, 400ms);
}

TEST(RemoteDriver, AbortCutsAnInFlightRequestAndTimeoutsAreRetried) {
  FakeOpenAiServer fake;
  fake.set_slow_seconds(20);
  fake.script({Fault::Slow});
  RemoteDriver driver(spec_for({fake.url()}));
  auto handle = driver.submit(chat("slow"));
  std::this_thread::sleep_for(200ms);  // in flight by now
  const auto aborted_at = Clock::now();
  handle->abort();
  EXPECT_EQ(finish(*handle)[0].finish_reason, FinishReason::Abort);
  EXPECT_LT(Clock::now() - aborted_at, 5s);  // not the 20 s the server takes

  FakeOpenAiServer slow_once;
  slow_once.set_slow_seconds(20);
  slow_once.script({Fault::Slow});
  RemoteSpec spec = spec_for({slow_once.url()});
  spec.request_timeout_s = 1;
  RemoteDriver timing_out(spec);
  auto retried = timing_out.submit(chat("eventually"));
  const FinishedRequest f = finish(*retried)[0];
  EXPECT_EQ(f.finish_reason, FinishReason::Stop) << f.error;
  EXPECT_EQ(f.output_text, FakeOpenAiServer::answer_to("eventually"));
}

TEST(RemoteDriver, TheStartUpCheckNamesAWrongModelAMissingKeyAndDeadEndpoints) {
  FakeOpenAiServer fake("served-name");
  RemoteSpec spec = spec_for({fake.url()});
  spec.model = "other";
  try {
    RemoteDriver driver(spec);
    FAIL() << "a model the server does not serve was accepted";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("serves no model 'other' (it serves: served-name)"));
  }
  spec.model = "";
  spec.api_key_env = "SLUICE_TEST_KEY_THAT_IS_NOT_SET";
  ::unsetenv("SLUICE_TEST_KEY_THAT_IS_NOT_SET");
  try {
    RemoteDriver driver(spec);
    FAIL() << "a missing key variable was accepted";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("SLUICE_TEST_KEY_THAT_IS_NOT_SET"));
  }
  std::string dead_url;
  {
    FakeOpenAiServer soon_dead;
    dead_url = soon_dead.url();
  }
  try {
    RemoteDriver driver(spec_for({dead_url}));
    FAIL() << "no endpoint answering was accepted";
  } catch (const Error& e) {
    // The reason in words, not httplib's bare "Connection" that reads as a cut-off sentence.
    EXPECT_THAT(e.what(), HasSubstr("no endpoint answered: " + dead_url + ": could not connect"));
  }
  EXPECT_THROW(parse_endpoint_url("ftp://host/v1"), Error);
  EXPECT_THROW(parse_endpoint_url("http:///v1"), Error);
  const EndpointUrl url = parse_endpoint_url("https://gpu1:8443/api/v1/");
  EXPECT_EQ(url.scheme_host, "https://gpu1:8443");
  EXPECT_EQ(url.base_path, "/api/v1");
}

TEST(RemoteDriver, TheKeyIsSentAsABearerToken) {
  FakeOpenAiServer fake;
  ::setenv("SLUICE_TEST_REMOTE_KEY", "sekrit", 1);
  RemoteSpec spec = spec_for({fake.url()});
  spec.api_key_env = "SLUICE_TEST_REMOTE_KEY";
  RemoteDriver driver(spec);
  auto handle = driver.submit(chat("k"));
  finish(*handle);
  for (const auto& seen : fake.seen()) EXPECT_EQ(seen.authorization, "Bearer sekrit") << seen.path;
}

// Issue 27: a `"content": null` answer finished as an empty sample (a done row with no output).
// It is retried like any malformed answer, then the sample fails saying why.
TEST(RemoteDriver, ANullContentIsRetriedThenFailsWithTheReason) {
  NullContentServer server;
  RemoteDriver driver(spec_for({server.url()}, 1));
  auto handle = driver.submit(chat(std::string("please ") + NullContentServer::kMarker));
  const FinishedRequest f = finish(*handle)[0];
  EXPECT_EQ(f.finish_reason, FinishReason::Error);
  EXPECT_EQ(f.output_text, "");
  EXPECT_THAT(f.error, HasSubstr(server.url()));
  EXPECT_THAT(f.error, HasSubstr("message.content is null"));
  EXPECT_THAT(f.error, HasSubstr(NullContentServer::kRefusal));
  EXPECT_THAT(f.error, HasSubstr("gave up after 2 attempts"));
  EXPECT_EQ(server.num_null_answers(), 2);  // retried once
}

}  // namespace
}  // namespace sluice::test
