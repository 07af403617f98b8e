// The server's answers, built from an engine service's events: a whole answer sent piece by piece
// (whole_response.h), a streamed one (stream_response.h), and the request group behind both
// (request_group.h). The pure JSON shapes are in openai_protocol_test.cpp; here the builders run
// on stories260K's real events.
#include <httplib.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <optional>

#include "app/server/request_group.h"
#include "app/server/stream_response.h"
#include "app/server/whole_response.h"
#include "tests/unit/engine/engine_test_util.h"
#include "tests/unit/server/response_test_util.h"
#include "tests/unit/service/service_test_util.h"

namespace sluice::test {
namespace {

using Json = nlohmann::json;

const ResponseHeader kBuilderText{CompletionKind::Text, "cmpl-7", 1700000000, "stories"};
const ResponseHeader kBuilderChat{CompletionKind::Chat, "chatcmpl-7", 1700000000, "stories"};

ChoiceEvent finished_choice(int choice_index, size_t prompt_idx, std::string text,
                            FinishReason reason, int num_prompt_tokens, size_t num_tokens,
                            std::string error = "") {
  ChoiceEvent e{choice_index, prompt_idx, {}};
  e.event.is_finished = true;
  e.event.finished.sample_idx = static_cast<uint32_t>(choice_index % 2);
  e.event.finished.output_text = std::move(text);
  e.event.finished.finish_reason = reason;
  e.event.finished.num_prompt_tokens = num_prompt_tokens;
  e.event.finished.output_token_ids.assign(num_tokens, 1);
  e.event.finished.error = std::move(error);
  return e;
}

// Choices finish in any order; the answer lists them by index, counts each prompt's tokens once
// (not once per choice), and its pieces read the same from any offset and in any read size, as
// httplib asks for them. It holds the request's share of the answers' budget until the response
// is gone. Caught: choices in finishing order, a prompt counted per sample, a byte lost or
// repeated where two pieces meet, the budget given back before the answer was sent.
TEST(WholeResponse, ListsChoicesByIndexAndReadsTheSameInAnyPieces) {
  WholeResponse answer(kBuilderText, 4, 2, false, nullptr);
  TokenDelta token;
  token.text = "ignored";
  answer.add({0, 0, StreamEvent{.token = token}});  // tokens come with the finished event
  answer.add(finished_choice(3, 1, "d \"quoted\"", FinishReason::Stop, 7, 2));
  answer.add(finished_choice(1, 0, "b\n", FinishReason::Length, 5, 4));
  answer.add(finished_choice(0, 0, "a", FinishReason::Length, 5, 4));
  answer.add(finished_choice(2, 1, "", FinishReason::Stop, 7, 0));
  EXPECT_EQ(answer.error(), "");
  EXPECT_FALSE(answer.is_aborted());
  const std::vector<Choice> in_order = {{0, "a", FinishReason::Length},
                                        {1, "b\n", FinishReason::Length},
                                        {2, "", FinishReason::Stop},
                                        {3, "d \"quoted\"", FinishReason::Stop}};
  const Json expected = completion_json(kBuilderText, in_order, Usage{5 + 7, 4 + 4 + 0 + 2});

  auto reservation = std::make_shared<int>(1);
  const std::weak_ptr<int> held = reservation;
  auto res = std::make_unique<httplib::Response>();
  answer.send(*res, std::move(reservation));
  EXPECT_EQ(res->status, 200);
  ASSERT_GT(res->content_length_, 0u);
  for (const size_t read_size : {size_t{1}, size_t{7}, size_t{64}, res->content_length_}) {
    const auto body = provide_all(*res, read_size);
    ASSERT_TRUE(body.has_value());
    EXPECT_EQ(body->size(), res->content_length_) << "reads of " << read_size;
    EXPECT_EQ(Json::parse(*body), expected) << "reads of " << read_size << ": " << *body;
  }
  EXPECT_FALSE(held.expired()) << "the reservation went before the response";
  res.reset();
  EXPECT_TRUE(held.expired()) << "the response kept the reservation after it was gone";
}

// The server answers a choice's error as a 400 and an aborted choice (shutdown) as a 503: the
// answer keeps the first error, and whether any choice was aborted.
TEST(WholeResponse, KeepsTheFirstErrorAndWhetherAChoiceWasAborted) {
  WholeResponse answer(kBuilderChat, 3, 1, false, nullptr);
  answer.add(finished_choice(1, 0, "", FinishReason::Error, 5, 0, "first error"));
  answer.add(finished_choice(0, 0, "", FinishReason::Error, 5, 0, "second error"));
  EXPECT_EQ(answer.error(), "first error");
  EXPECT_FALSE(answer.is_aborted());
  answer.add(finished_choice(2, 0, "x", FinishReason::Abort, 5, 1));
  EXPECT_TRUE(answer.is_aborted());
}

std::string token_bytes(int32_t id) {
  return stories260k_session()->tokenizer->token_to_bytes(id, /*at_sequence_start=*/false);
}

// A streamed chat answer of two seeded choices with top log-probabilities, on the real engine:
// each choice's text and log-probabilities arrive once each and in order (a token that ends
// inside a UTF-8 character waits for the next chunk, and must not be lost or sent twice), the
// role comes with a choice's first chunk only, each choice ends with one finish chunk, then the
// usage (the prompt counted once for its two choices) and [DONE].
TEST(StreamResponse, SendsEveryTokenOnceThenEachFinishTheUsageAndDone) {
  const auto service = make_stories260k_service();
  const std::vector<int32_t> prompt = stories260k_encode("Once upon a time");
  // At this temperature and seed a token makes no text of its own (its text is empty until the
  // next token's: a byte of a character, or a piece held back), and its log-probabilities must
  // wait for the next chunk.
  const SamplingParams params{
      .n = 2, .temperature = 2.0f, .seed = 7, .max_tokens = 24, .ignore_eos = true, .logprobs = 2};
  const StoriesModel model;
  auto engine = model.make_engine(EngineConfig{});
  engine->add_request(prompt, params, 0);
  std::map<uint32_t, FinishedRequest> alone;
  int num_textless_tokens = 0;
  while (engine->has_unfinished()) {
    StepResult step = engine->step();
    for (const TokenDelta& token : step.new_tokens) num_textless_tokens += token.text.empty();
    for (FinishedRequest& f : step.finished) alone[f.sample_idx] = std::move(f);
  }
  ASSERT_GT(num_textless_tokens, 0) << "every token made text of its own: pick another seed";

  std::vector<ServiceRequest> requests;
  requests.push_back({prompt, params, 0, true});
  auto group = std::make_unique<RequestGroup>(*service, std::move(requests));
  httplib::Response res;
  send_stream(res, std::move(group), kBuilderChat,
              StreamOptions{2, 1, /*include_usage=*/true, /*wants_logprobs=*/true, token_bytes},
              nullptr);
  const auto body = provide_all(res, 0);
  ASSERT_TRUE(body.has_value());
  const std::vector<std::string> events = sse_data(*body);
  ASSERT_GE(events.size(), 3u);
  EXPECT_EQ(events.back(), "[DONE]");
  const Json usage = Json::parse(events[events.size() - 2]);
  EXPECT_EQ(usage["choices"], Json::array());
  EXPECT_EQ(usage["usage"]["prompt_tokens"], prompt.size());
  EXPECT_EQ(usage["usage"]["completion_tokens"], 48);

  std::map<int, std::string> text;
  std::map<int, std::string> logprob_bytes;
  std::map<int, std::vector<double>> logprobs;
  std::map<int, int> num_chunks;
  std::map<int, int> num_finishes;
  for (size_t i = 0; i + 2 < events.size(); ++i) {
    const Json chunk = Json::parse(events[i]);
    ASSERT_EQ(chunk["choices"].size(), 1u) << events[i];
    const Json& choice = chunk["choices"][0];
    const int index = choice["index"].get<int>();
    ASSERT_TRUE(index == 0 || index == 1) << events[i];
    EXPECT_EQ(num_finishes[index], 0) << "a chunk after choice " << index << "'s finish";
    EXPECT_EQ(choice["delta"].contains("role"), num_chunks[index]++ == 0) << events[i];
    if (choice["delta"].contains("content")) text[index] += choice["delta"]["content"];
    if (!choice["logprobs"].is_null()) {
      for (const Json& entry : choice["logprobs"]["content"]) {
        for (const Json& byte : entry["bytes"]) logprob_bytes[index] += byte.get<char>();
        logprobs[index].push_back(entry["logprob"].get<double>());
      }
    }
    if (!choice["finish_reason"].is_null()) {
      EXPECT_EQ(choice["finish_reason"], "length");
      ++num_finishes[index];
    }
  }
  for (int index = 0; index < 2; ++index) {
    const FinishedRequest& expected = alone.at(static_cast<uint32_t>(index));
    EXPECT_EQ(num_finishes[index], 1) << "choice " << index;
    EXPECT_EQ(text[index], expected.output_text) << "choice " << index;
    std::string bytes;
    for (const int32_t id : expected.output_token_ids) bytes += token_bytes(id);
    EXPECT_EQ(logprob_bytes[index], bytes) << "choice " << index << "'s tokens in its logprobs";
    ASSERT_EQ(logprobs[index].size(), expected.output_logprobs.size()) << "choice " << index;
    for (size_t t = 0; t < logprobs[index].size(); ++t)
      EXPECT_FLOAT_EQ(static_cast<float>(logprobs[index][t]), expected.output_logprobs[t].logprob);
  }
}

// A streamed answer's client leaves while its request sits preempted (its blocks freed, waiting
// to be recomputed): the write fails, the response is dropped, and with it the group, whose
// request is aborted where it waits — never recomputed for nobody. The server-side twin of
// EngineServiceRaces.AClientThatDisconnectsWhileItsRequestIsPreemptedHoldsNothing, through the
// stream's own path (a failed write, then the response dropped). Caught: a stream that kept its
// group after a failed write, a group that did not abort on destruction.
TEST(StreamResponse, AClientThatLeavesWhileItsRequestIsPreemptedAbortsIt) {
  const auto service = make_stories260k_service(
      ServiceConfig{.engine = EngineConfig{.block_size = 16, .num_kv_blocks = 8}});
  const SamplingParams params{.max_tokens = 100, .ignore_eos = true};
  const auto turnstile = std::make_shared<EventTurnstile>();
  auto kept = service->submit({stories260k_encode("Once upon a time"), params, 0},
                              EventTurnstile::on_event(turnstile));
  ASSERT_TRUE(turnstile->wait_for_event());
  std::vector<ServiceRequest> requests;
  requests.push_back({stories260k_encode("The cat sat on the mat"), params, 1, true});
  auto res = std::make_unique<httplib::Response>();
  send_stream(*res, std::make_unique<RequestGroup>(*service, std::move(requests)), kBuilderText,
              StreamOptions{1, 1, false, false, nullptr}, nullptr);
  const OpenOnExit open_on_exit(turnstile);
  bool is_preempted = false;
  for (int event = 1; event < 100 && !is_preempted; ++event) {
    turnstile->pass();
    ASSERT_TRUE(turnstile->wait_for_event());
    is_preempted = service->metrics().num_preemptions > 0;
  }
  ASSERT_TRUE(is_preempted) << "no step preempted";
  ASSERT_EQ(service->metrics().num_waiting, 1);
  // The client is gone: the next write fails, and httplib drops the response.
  httplib::DataSink sink;
  int num_writes = 0;
  sink.write = [&](const char*, size_t) {
    ++num_writes;
    return false;
  };
  sink.done = [] {};
  sink.is_writable = [] { return false; };
  EXPECT_FALSE(res->content_provider_(0, 0, sink));
  EXPECT_EQ(num_writes, 1);
  res.reset();
  turnstile->open();

  const EndedStream stream = read_to_end(kept->stream());
  ASSERT_EQ(stream.finished.size(), 1u);
  EXPECT_EQ(stream.finished[0].finish_reason, FinishReason::Length);
  const ServiceMetrics metrics = service->metrics();
  EXPECT_EQ(metrics.num_requests_aborted, 1);
  EXPECT_EQ(metrics.num_preemptions, 1) << "the stream's request was taken up again";
  EXPECT_EQ(metrics.num_kv_blocks_used, 0);
  EXPECT_EQ(metrics.num_waiting, 0);
}

// A group's events carry their choice: prompt i's sample s is choice i × n + s, of prompt i.
// Caught: choices of different prompts under one index (their texts swapped or overwritten in
// the answer), a prompt index that counts the wrong prompt's tokens in the usage.
TEST(RequestGroup, TagsEachEventWithItsChoiceAndPrompt) {
  const auto service = make_stories260k_service();
  const std::vector<std::vector<int32_t>> prompts = {stories260k_encode("Once upon a time"),
                                                     stories260k_encode("The dog ran")};
  const SamplingParams params{.n = 2, .temperature = 0.9f, .seed = 5, .max_tokens = 10};
  const StoriesModel model;
  auto engine = model.make_engine(EngineConfig{});
  const auto alone = run_all(*engine, prompts, params);  // sample key = prompt index

  std::vector<ServiceRequest> requests;
  for (size_t i = 0; i < prompts.size(); ++i) requests.push_back({prompts[i], params, i, true});
  RequestGroup group(*service, std::move(requests));
  std::map<int, std::vector<int32_t>> streamed;
  std::map<int, FinishedRequest> finished;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!group.is_done() && std::chrono::steady_clock::now() < deadline) {
    for (auto& e : group.wait(std::chrono::milliseconds(200))) {
      const uint32_t sample_idx =
          e.event.is_finished ? e.event.finished.sample_idx : e.event.token.sample_idx;
      EXPECT_EQ(e.choice_index, static_cast<int>(e.prompt_idx) * 2 + static_cast<int>(sample_idx));
      if (e.event.is_finished) {
        EXPECT_EQ(finished.count(e.choice_index), 0u) << "choice " << e.choice_index << " twice";
        finished[e.choice_index] = std::move(e.event.finished);
      } else {
        streamed[e.choice_index].push_back(e.event.token.token_id);
      }
    }
  }
  ASSERT_TRUE(group.is_done());
  ASSERT_EQ(finished.size(), 4u);
  for (int choice = 0; choice < 4; ++choice) {
    const auto& expected =
        alone.at({static_cast<size_t>(choice / 2), static_cast<uint32_t>(choice % 2)});
    EXPECT_EQ(finished[choice].output_token_ids, expected.output_token_ids) << "choice " << choice;
    EXPECT_EQ(streamed[choice], expected.output_token_ids) << "choice " << choice;
  }
}

// A request whose third prompt finds the queue full is a 503, and the two prompts submitted
// before it are aborted before they run: a refused request costs the engine nothing and holds
// no room in the queue. Caught: a group that left its first requests running for nobody (they
// would generate tokens and count as finished, not aborted).
TEST(RequestGroup, ASubmitRefusedHalfwayAbortsThePromptsBeforeIt) {
  const auto service = make_stories260k_service(
      ServiceConfig{.engine = EngineConfig{.max_num_seqs = 1}, .max_num_waiting = 2});
  const auto turnstile = std::make_shared<EventTurnstile>();
  auto pacer = service->submit({stories260k_encode("Once upon a time"),
                                SamplingParams{.max_tokens = 400, .ignore_eos = true}, 0},
                               EventTurnstile::on_event(turnstile));
  ASSERT_TRUE(turnstile->wait_for_event());  // the service's thread stands still from here
  const OpenOnExit open_on_exit(turnstile);
  std::vector<ServiceRequest> requests;
  for (uint64_t i = 0; i < 3; ++i)
    requests.push_back({stories260k_encode("The cat"), SamplingParams{.max_tokens = 5}, i, true});
  EXPECT_THROW(RequestGroup(*service, std::move(requests)), QueueFull);
  pacer->abort();
  turnstile->open();
  // The pacer's abort reaches the engine in the loop that takes up the group's two requests (they
  // hold their room in the queue until then), so once the pacer's stream ended they are gone.
  EXPECT_EQ(read_to_end(pacer->stream()).finished.at(0).finish_reason, FinishReason::Abort);
  EXPECT_EQ(service->metrics().num_waiting, 0);

  auto later = service->submit(
      {stories260k_encode("A dog"), SamplingParams{.max_tokens = 3, .ignore_eos = true}, 9});
  const EndedStream stream = read_to_end(later->stream());
  ASSERT_EQ(stream.finished.size(), 1u);
  EXPECT_EQ(stream.finished[0].finish_reason, FinishReason::Length);
  const ServiceMetrics metrics = service->metrics();
  EXPECT_EQ(metrics.num_requests_aborted, 3);  // the group's two and the pacer
  EXPECT_EQ(metrics.num_requests_finished, 4);
  EXPECT_EQ(metrics.num_generation_tokens, 1 + 3) << "the refused group's prompts generated";
  EXPECT_EQ(metrics.num_waiting, 0);
}

}  // namespace
}  // namespace sluice::test
