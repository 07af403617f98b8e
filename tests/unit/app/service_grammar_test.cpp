// The request contract on stories260K: a request carries its grammar's source; the engine service
// compiles it through its one cache, once per source, on the thread that submits (never the
// engine's), and a source that does not compile is refused to the submitter; the engine itself
// never compiles.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <mutex>
#include <thread>
#include <vector>

#include "engine/backend/cpu/cpu_backend.h"
#include "engine/service/engine_service.h"
#include "tests/unit/engine/engine_test_util.h"

namespace sluice::test {
namespace {

using ::testing::HasSubstr;

std::shared_ptr<const ModelSession> contract_session() {
  static const auto session = std::make_shared<const ModelSession>(
      open_model_session(shared_path("models/stories260K/gguf/stories260K-f32.gguf"), ""));
  return session;
}

ServiceRequest constrained_request(const std::shared_ptr<const GrammarSource>& source,
                                   uint64_t key) {
  const Tokenizer& tokenizer = *contract_session()->tokenizer;
  ServiceRequest request;
  request.prompt_token_ids =
      tokenizer.encode("Once upon a time", EncodeOptions{.add_bos = tokenizer.add_bos_default()});
  request.sampling.max_tokens = 8;
  request.sampling.grammar = source;
  request.sample_key = key;
  return request;
}

std::string output_of(RequestHandle& handle) {
  std::string text;
  while (auto event = handle.stream().pop(RequestStream::Clock::time_point::max())) {
    if (event->is_finished) text = event->finished.output_text;
  }
  return text;
}

// Two requests with one source: one compile, on the submitting thread, and both outputs follow
// it; a source that does not compile is InvalidGrammar from submit, naming it, and the service
// goes on. Catches a compile on the engine's thread, a compile per request, and a refusal that
// reaches the engine (where it would fail the request, not its submitter).
TEST(ServiceGrammar, ASourceIsCompiledOnceOnTheSubmittingThreadThroughTheCache) {
  std::mutex mutex;
  std::vector<std::thread::id> build_threads;
  auto grammars =
      std::make_shared<GrammarCache>(8, 4 * kMaxGrammarSymbols, [&](const GrammarSource& source) {
        {
          const std::lock_guard lock(mutex);
          build_threads.push_back(std::this_thread::get_id());
        }
        return build_grammar(source);
      });
  const auto session = contract_session();
  EngineService service(session, std::make_unique<CpuBackend>(*session->model),
                        ServiceConfig{.grammars = grammars});
  EXPECT_EQ(&service.grammars(), grammars.get());
  const auto choice = std::make_shared<const GrammarSource>(
      GrammarSource{GrammarSourceKind::Choice, "--choice", "", {" yes", " no", " maybe"}});
  auto first = service.submit(constrained_request(choice, 1));
  auto second = service.submit(constrained_request(choice, 2));
  for (RequestHandle* handle : {first.get(), second.get()}) {
    const std::string output = output_of(*handle);
    EXPECT_TRUE(output == " yes" || output == " no" || output == " maybe") << output;
  }
  ASSERT_EQ(build_threads.size(), 1u);
  EXPECT_EQ(build_threads[0], std::this_thread::get_id());

  const auto broken = std::make_shared<const GrammarSource>(
      GrammarSource{GrammarSourceKind::Regex, "structured_outputs.regex", "[a-", {}});
  try {
    service.submit(constrained_request(broken, 3));
    FAIL() << "a grammar that does not compile was queued";
  } catch (const InvalidGrammar& e) {
    EXPECT_THAT(e.what(), HasSubstr("structured_outputs.regex"));
  }
  EXPECT_THROW(service.check_grammar(*broken), InvalidGrammar);
  const size_t num_builds = build_threads.size();  // a refused source is not kept: built again
  service.check_grammar(*choice);                  // compiled already: no build
  EXPECT_EQ(build_threads.size(), num_builds);
  auto after = service.submit(constrained_request(choice, 4));
  EXPECT_FALSE(output_of(*after).empty());
}

// The engine compiles nothing: a source handed to it without its compiled grammar is refused
// rather than run unconstrained. Catches a client that skips the service's compile.
TEST(ServiceGrammar, TheEngineRefusesASourceItIsNotGivenCompiled) {
  StoriesModel model;
  auto engine = model.make_engine(EngineConfig{});
  SamplingParams params;
  params.max_tokens = 4;
  params.grammar = std::make_shared<const GrammarSource>(
      GrammarSource{GrammarSourceKind::JsonObject, "--json-object", "", {}});
  EXPECT_THROW(engine->add_request(model.encode("Once"), params, 0), Error);
  EXPECT_FALSE(engine->has_unfinished());
}

}  // namespace
}  // namespace sluice::test
