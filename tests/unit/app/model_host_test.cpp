// ModelHost on stories260K: it lends one engine service to a job, a row run alone and the server
// at once; a job with other options replaces the service, serving stopping and resuming on the
// new one; a grammar checked through its cache before a run is compiled once.
#include "app/model_host.h"

#include <gtest/gtest.h>

#include <future>
#include <mutex>
#include <vector>

#include "app/generation_job.h"
#include "tests/unit/app/job_test_util.h"

namespace sluice::test {
namespace {

// What the host said about serving, in order.
struct ServingLog {
  std::mutex mutex;
  std::vector<std::string> events;
  std::shared_ptr<EngineService> last_started;

  ServingEvents events_for_host() {
    ServingEvents e;
    e.started = [this](const std::string&, const std::string&, int,
                       const std::shared_ptr<EngineService>& service) {
      const std::lock_guard lock(mutex);
      events.push_back("started");
      last_started = service;
    };
    e.stopped = [this](ServingStop reason, const std::string&) {
      const std::lock_guard lock(mutex);
      events.push_back(str_cat("stopped ", static_cast<int>(reason)));
    };
    e.failed = [this](const std::string& message) {
      const std::lock_guard lock(mutex);
      events.push_back("failed: " + message);
    };
    return e;
  }
};

// A job's rows and a row run alone beside them go to one service, which another job with the same
// options is lent too (the model loads once). Catches a host that builds a service per client.
TEST(ModelHost, LendsOneServiceToAJobAndARowRunAloneAtOnce) {
  const std::string dir = make_temp_dir("host-lend");
  ModelHost host;
  auto job = GenerationJob::create(stories_spec(dir, 40), dir + "/job.sluicejob");
  job->load(host.lend_for_job(job->spec()));
  const std::shared_ptr<RequestService> service = job->lease().service;
  ASSERT_TRUE(host.session());
  EXPECT_EQ(job->lease().session, host.session());
  std::promise<std::vector<SampleResult>> alone;
  std::vector<SampleResult> first_row_samples;
  bool is_started = false;
  job->run(
      [&](const RowResult& row, double) {
        if (std::exchange(is_started, true)) return;
        first_row_samples = row.samples;
        // Beside the job's rows still running, on the job's service.
        host.run_beside(
            [&, row_index = row.row_index] { alone.set_value(job->run_row_alone(row_index)); });
      },
      nullptr);
  EXPECT_EQ(alone.get_future().get(), first_row_samples);
  EXPECT_EQ(service->metrics().num_requests_finished, 41);
  // A second job with the same model and options is lent the same service.
  auto second = GenerationJob::create(job->spec(), dir + "/second.sluicejob");
  second->load(host.lend_for_job(second->spec()));
  EXPECT_EQ(second->lease().service, service);
  EXPECT_EQ(second->lease().session, job->lease().session);
}

// Serving runs on the loaded model's service; a job with the same options is lent that service,
// one with other options replaces it: serving stops first and resumes on the job's service.
// Catches a second engine beside the served one, and serving left on a service the host dropped.
TEST(ModelHost, ServingMovesToTheServiceAJobReplacesItWith) {
  const std::string dir = make_temp_dir("host-serve");
  ServingLog log;
  ModelHost host(log.events_for_host());
  const GenerationSpec spec = stories_spec(dir, 4);
  ServerOptions options;
  options.port = 0;
  options.served_model_name = "stories";
  host.serve(options, spec);  // no model loaded yet
  ASSERT_EQ(log.events.size(), 1u);
  EXPECT_EQ(log.events[0], "failed: no model is loaded: open a model first");
  host.load_model(spec.model_path, "");
  host.serve(options, spec);
  ASSERT_EQ(log.events.size(), 2u);
  EXPECT_EQ(log.events[1], "started");
  const std::shared_ptr<EngineService> served = host.served_service();
  ASSERT_TRUE(served);
  EXPECT_EQ(log.last_started, served);

  auto same = GenerationJob::create(spec, dir + "/same.sluicejob");
  same->load(host.lend_for_job(same->spec()));
  EXPECT_EQ(same->lease().service, served);
  EXPECT_EQ(log.events.size(), 2u) << "serving was disturbed by a job it could share";

  GenerationSpec other = spec;
  other.engine.max_num_seqs = 4;
  auto replacing = GenerationJob::create(other, dir + "/other.sluicejob");
  replacing->load(host.lend_for_job(replacing->spec()));
  EXPECT_NE(replacing->lease().service, served);
  ASSERT_EQ(log.events.size(), 4u);
  EXPECT_EQ(log.events[2], str_cat("stopped ", static_cast<int>(ServingStop::JobBuildsEngine)));
  EXPECT_EQ(log.events[3], "started");
  EXPECT_EQ(host.served_service(), replacing->lease().service);
  EXPECT_TRUE(host.stop_serving().has_value());
  EXPECT_FALSE(host.served_service());
}

// A grammar checked through the host's cache before a run (as `sluice generate` checks its own
// before the model loads) is the one the job's service compiles: one compile in all. Catches a
// service that compiles through a cache of its own.
TEST(ModelHost, AGrammarCheckedBeforeTheRunIsCompiledOnce) {
  const std::string dir = make_temp_dir("host-grammar");
  std::atomic<int> num_builds{0};
  auto grammars =
      std::make_shared<GrammarCache>(8, 4 * kMaxGrammarSymbols, [&](const GrammarSource& source) {
        ++num_builds;
        return build_grammar(source);
      });
  ModelHost host({}, grammars);
  GenerationSpec spec = stories_spec(dir, 6);
  spec.sampling.grammar = std::make_shared<const GrammarSource>(
      GrammarSource{GrammarSourceKind::Choice, "--choice", "", {" yes", " no"}});
  host.grammars().get(*spec.sampling.grammar);  // the check before the model loads
  auto job = GenerationJob::create(spec, dir + "/job.sluicejob");
  job->load(host.lend_for_job(job->spec()));
  std::vector<std::string> outputs;
  job->run([&](const RowResult& row, double) { outputs.push_back(row.samples.at(0).output); },
           nullptr);
  ASSERT_EQ(outputs.size(), 6u);
  for (const std::string& output : outputs) EXPECT_TRUE(output == " yes" || output == " no");
  EXPECT_EQ(num_builds.load(), 1);
}

}  // namespace
}  // namespace sluice::test
