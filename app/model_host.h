// The loaded model and the engine service that runs it, owned in one place and lent to every
// client: a job's rows, a row run alone, the HTTP server. Plain C++ and thread-safe: the app's
// EngineWorker is a thin Qt adapter over it, and `sluice generate` holds one for its run.
//
// One model is loaded at a time. Its engine service is built for the device and engine options of
// the first client that needs one and kept while later clients ask for the same options, so the
// weights stay on the backend between jobs. A job with other options (or another model) replaces
// it, and the clients of the old one let go first, so two engines never hold memory at once: rows
// running alone finish, and serving stops (it resumes on the new service when the model is the
// same). A remote job is lent a RemoteDriver of its own and leaves the loaded model alone. Every
// service the host builds compiles its requests' grammars through the host's one GrammarCache,
// which also checks a grammar before a run (before there is a service).
#pragma once

#include <atomic>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "app/generation_spec.h"
#include "app/server/openai_server.h"
#include "app/service_lease.h"
#include "engine/grammar/grammar_cache.h"
#include "engine/model_session.h"
#include "engine/service/engine_service.h"

namespace sluice {

class ServedModel;

// Why serving stopped without being asked to.
enum class ServingStop : uint8_t {
  Asked,                   // stop_serving()
  AnotherModelLoaded,      // load_model() replaced the model it served
  JobBuildsEngine,         // a job replaces the engine; serving resumes on the job's
  JobRunsAnotherModel,     // a job loads another model
  JobStoppedBeforeEngine,  // serving waited for a job's engine, and the job stopped before it
};

// What the host says about serving as it happens. Called with the host's lock held, from the
// thread of the call that caused it: a handler must be quick and must not call the host.
struct ServingEvents {
  // Serving started (or resumed) at base_url (http://HOST:PORT/v1) on service.
  std::function<void(const std::string& base_url, const std::string& model_name, int port,
                     const std::shared_ptr<EngineService>& service)>
      started;
  // Serving stopped; base_url is what it served ("" when nothing was served).
  std::function<void(ServingStop reason, const std::string& base_url)> stopped;
  // Serving could not start: why (the address, a model that is not loaded).
  std::function<void(const std::string& message)> failed;
};

class ModelHost {
 public:
  // grammars: the cache every service compiles through (null: the host makes its own).
  explicit ModelHost(ServingEvents events = {}, std::shared_ptr<GrammarCache> grammars = nullptr);
  // Stops serving and waits for the runs beside the jobs.
  ~ModelHost();
  ModelHost(const ModelHost&) = delete;
  ModelHost& operator=(const ModelHost&) = delete;

  // The cache every service the host builds compiles grammars through (thread-safe): a source
  // checked with it before a run is compiled once.
  GrammarCache& grammars() const { return *grammars_; }
  const std::shared_ptr<GrammarCache>& shared_grammars() const { return grammars_; }

  // Loads the model at path and makes it the loaded one once it has loaded (a failed or cancelled
  // load keeps the old one): the old model's service goes, and serving stops. Returns the new
  // session. Throws Error, or Cancelled when options' progress callback says so.
  std::shared_ptr<const ModelSession> load_model(const std::string& path,
                                                 const std::string& tokenizer_path,
                                                 const LoadOptions& options = {});
  // The loaded model (null before one is loaded) and the path it was loaded from.
  std::shared_ptr<const ModelSession> session() const;
  std::string session_path() const;

  // Lends what runs spec's rows: for a remote spec a new RemoteDriver (on_note hears about its
  // endpoints; it checks them first); else the loaded model's service when spec names the loaded
  // model and the service's options, or a service built for spec (loading its model when it is
  // another, with options' progress), replacing the old one as the header says. Throws Error
  // (the device, the model, the memory plan, the endpoints) or Cancelled.
  ServiceLease lend_for_job(const GenerationSpec& spec, const LoadOptions& options = {},
                            std::function<void(const std::string&)> on_note = {});

  // Runs fn on a thread of its own, beside the jobs (a row run alone on a job's service). The
  // host waits for these before it replaces a service, and when it is destroyed.
  void run_beside(std::function<void()> fn);

  // Serves the loaded model over HTTP with options (defaults from spec.sampling without its
  // grammar) on the loaded model's service, building one for spec's device and engine options
  // when there is none (a later job with the same options runs on it); while a job builds the
  // engine, serving waits for it. Answers through the events: started or failed.
  void serve(ServerOptions options, const GenerationSpec& spec);
  // Stops serving (requests in flight are answered first) and forgets a serve that waits for a
  // job's engine. Returns the base URL it served, or nullopt.
  std::optional<std::string> stop_serving();
  // The service being served (null when not serving).
  std::shared_ptr<EngineService> served_service() const;

 private:
  struct BesideRun;
  class JobLoading;

  // Waits until every run beside the jobs has finished.
  void wait_for_beside();
  // Stops serving and returns what it served with (its port kept). Precondition: mutex_ held.
  std::optional<ServerOptions> stop_serving_locked();
  // Serves service_ with options; reports started or failed. Precondition: mutex_ held.
  void start_serving_locked(const ServerOptions& options);
  // Drops the loaded model's service; the clients on it let go first. Precondition: mutex_ not
  // held. reuse: the next service runs the same model (serving resumes on it).
  void drop_service(bool reuse);
  std::shared_ptr<EngineService> build_service(std::shared_ptr<const ModelSession> session,
                                               const GenerationSpec& spec, int max_num_waiting);

  const ServingEvents events_;
  const std::shared_ptr<GrammarCache> grammars_;

  mutable std::mutex mutex_;  // guards everything below
  std::shared_ptr<const ModelSession> session_;
  std::string session_path_;
  std::shared_ptr<EngineService> service_;
  std::string service_key_;  // the options service_ was built for
  std::unique_ptr<ServedModel> served_;
  std::optional<ServerOptions> serve_after_load_;  // a serve that waits for a job's engine
  bool is_job_loading_ = false;                    // a job is building the engine

  std::mutex beside_mutex_;
  std::list<BesideRun> beside_;
};

}  // namespace sluice
