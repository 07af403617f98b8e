// How large an answer may grow (response_budget.h): entries counted from the request, a 400
// naming the parameters past the per-request limit, a 503 past the budget of all requests.
#include "app/server/response_budget.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "app/server/api_error.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

SamplingParams budget_sampling(int n, int max_tokens, int logprobs) {
  SamplingParams s;
  s.n = n;
  s.max_tokens = max_tokens;
  s.logprobs = logprobs;
  return s;
}

TEST(ResponseBudget, CountsChoicesTokensAndTopLogprobs) {
  const std::vector<size_t> one_prompt = {10};
  EXPECT_EQ(count_response_entries(budget_sampling(1, 100, -1), one_prompt, 4096), 100u);
  EXPECT_EQ(count_response_entries(budget_sampling(4, 100, -1), one_prompt, 4096), 400u);
  EXPECT_EQ(count_response_entries(budget_sampling(4, 100, 0), one_prompt, 4096), 400u);
  EXPECT_EQ(count_response_entries(budget_sampling(4, 100, 20), one_prompt, 4096), 4u * 100 * 21);
  // The context caps the tokens: 512 - 12 left of a 12-token prompt.
  EXPECT_EQ(count_response_entries(budget_sampling(2, 100000, -1), std::vector<size_t>{12}, 512),
            2u * 500);
  const std::vector<size_t> two_prompts = {10, 500};
  EXPECT_EQ(count_response_entries(budget_sampling(3, 100, 1), two_prompts, 512),
            3u * (100 + 12) * 2);
}

// Issue 27 item 3: chat n 128, max_tokens 2048, top_logprobs 20 made an 87 MB answer that took
// the server's memory from 232 MB to 1.6 GB.
TEST(ResponseBudget, ARequestPastTheLimitIsA400NamingItsParameters) {
  CompletionRequest r;
  r.kind = CompletionKind::Chat;
  r.sampling = budget_sampling(128, 2048, 20);
  const std::vector<size_t> prompt = {20};
  try {
    check_response_entries(r, prompt, 32768, 1 << 20);
    FAIL() << "accepted 128 x 2048 x 21 entries";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status(), 400);
    EXPECT_EQ(e.param(), "n");
    const std::string message = e.what();
    EXPECT_THAT(message, HasSubstr("5505024"));  // 128 x 2048 x 21
    EXPECT_THAT(message, HasSubstr("n (128)"));
    EXPECT_THAT(message, HasSubstr("max_tokens 2048"));
    EXPECT_THAT(message, HasSubstr("top_logprobs 20"));
    EXPECT_THAT(message, HasSubstr("1048576"));
    EXPECT_THAT(message, HasSubstr("--max-response-entries"));
  }
  r.sampling = budget_sampling(8, 2048, 20);  // 344064 entries
  EXPECT_NO_THROW(check_response_entries(r, prompt, 32768, 1 << 20));
  r.kind = CompletionKind::Text;
  r.sampling = budget_sampling(1, 1 << 24, 20);
  try {
    check_response_entries(r, prompt, 1 << 22, 1 << 20);
    FAIL() << "accepted 4M x 21 entries";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.param(), "logprobs");  // text completions name it so
  }
}

}  // namespace
}  // namespace sluice
