#include "app/model_host.h"

#include <algorithm>
#include <utility>

#include "app/remote/remote_driver.h"
#include "app/served_model.h"
#include "engine/backend/make_backend.h"
#include "engine/core/error.h"

namespace sluice {

namespace {

// What an engine service is built for: a job with another key needs another service.
std::string service_key(const GenerationSpec& spec) {
  const EngineConfig& e = spec.engine;
  return spec_to_json(spec)["engine"].dump() + str_cat("|", spec.device, "|", spec.num_threads, "|",
                                                       e.enable_chunked_prefill, "|",
                                                       e.check_invariants, "|", e.sample_on_device);
}

}  // namespace

struct ModelHost::BesideRun {
  std::thread thread;
  std::shared_ptr<std::atomic<bool>> is_done;
};

// Marks a local job's lend in progress (a serve asked meanwhile waits for its engine); a serve
// still waiting when the lend ends without an engine is dropped, and said so.
class ModelHost::JobLoading {
 public:
  explicit JobLoading(ModelHost& host) : host_(host) {
    const std::lock_guard lock(host_.mutex_);
    host_.is_job_loading_ = true;
  }
  ~JobLoading() {
    const std::lock_guard lock(host_.mutex_);
    host_.is_job_loading_ = false;
    if (std::exchange(host_.serve_after_load_, std::nullopt) && host_.events_.stopped)
      host_.events_.stopped(ServingStop::JobStoppedBeforeEngine, "");
  }
  JobLoading(const JobLoading&) = delete;
  JobLoading& operator=(const JobLoading&) = delete;

 private:
  ModelHost& host_;
};

ModelHost::ModelHost(ServingEvents events, std::shared_ptr<GrammarCache> grammars)
    : events_(std::move(events)),
      grammars_(grammars ? std::move(grammars)
                         : std::make_shared<GrammarCache>(kServiceGrammarCacheCapacity)) {}

ModelHost::~ModelHost() {
  {
    const std::lock_guard lock(mutex_);
    served_.reset();
  }
  wait_for_beside();
}

std::shared_ptr<const ModelSession> ModelHost::session() const {
  const std::lock_guard lock(mutex_);
  return session_;
}

std::string ModelHost::session_path() const {
  const std::lock_guard lock(mutex_);
  return session_path_;
}

std::shared_ptr<EngineService> ModelHost::served_service() const {
  const std::lock_guard lock(mutex_);
  return served_ ? served_->service() : nullptr;
}

std::shared_ptr<const ModelSession> ModelHost::load_model(const std::string& path,
                                                          const std::string& tokenizer_path,
                                                          const LoadOptions& options) {
  // The loaded model (and its engine) stay until the new one has loaded.
  auto session =
      std::make_shared<const ModelSession>(open_model_session(path, tokenizer_path, options));
  wait_for_beside();  // a row running alone holds the old engine
  const std::lock_guard lock(mutex_);
  if (served_) {
    const std::string url = served_->baseUrl();
    stop_serving_locked();
    if (events_.stopped) events_.stopped(ServingStop::AnotherModelLoaded, url);
  }
  service_.reset();
  service_key_.clear();
  session_ = session;
  session_path_ = path;
  return session;
}

void ModelHost::drop_service(bool reuse) {
  wait_for_beside();  // a row running alone holds the old engine
  const std::lock_guard lock(mutex_);
  // So does the server: it serves again from the job's engine once that is built.
  if (served_) {
    const std::string url = served_->baseUrl();
    std::optional<ServerOptions> served = stop_serving_locked();
    if (reuse) serve_after_load_ = std::move(served);
    if (events_.stopped)
      events_.stopped(reuse ? ServingStop::JobBuildsEngine : ServingStop::JobRunsAnotherModel, url);
  }
  service_.reset();  // the old engine's memory goes before the new one is built
  service_key_.clear();
}

std::shared_ptr<EngineService> ModelHost::build_service(std::shared_ptr<const ModelSession> session,
                                                        const GenerationSpec& spec,
                                                        int max_num_waiting) {
  auto backend = make_backend(*session->model, spec.device, spec.num_threads,
                              spec.engine.kv_cache_dtype, spec.engine.num_cpu_moe_layers);
  return std::make_shared<EngineService>(
      std::move(session), std::move(backend),
      ServiceConfig{
          .engine = spec.engine, .max_num_waiting = max_num_waiting, .grammars = grammars_});
}

ServiceLease ModelHost::lend_for_job(const GenerationSpec& spec, const LoadOptions& options,
                                     std::function<void(const std::string&)> on_note) {
  if (spec.remote.is_remote()) {
    RemoteSpec remote = spec.remote;
    remote.reasoning = spec.prompt.reasoning;  // forwarded with each chat request
    auto driver = std::make_shared<RemoteDriver>(remote, std::move(on_note));
    std::string model = driver->model();
    return {std::move(driver), nullptr, std::move(model)};
  }
  const std::string key = service_key(spec);
  bool reuse = false;
  {
    const std::lock_guard lock(mutex_);
    reuse = session_ && session_path_ == spec.model_path;
    if (reuse && service_ && service_key_ == key) return {service_, session_, ""};
  }
  const JobLoading loading(*this);
  drop_service(reuse);
  // A missing GPU (or a cache it would need) is reported before the model loads.
  check_backend_choice(spec.device, spec.engine.kv_cache_dtype);
  std::shared_ptr<const ModelSession> session =
      reuse ? this->session()
            : std::make_shared<const ModelSession>(
                  open_model_session(spec.model_path, spec.tokenizer_path, options));
  // The job's own queue holds its whole window of rows.
  auto service = build_service(session, spec, static_cast<int>(job_window_size(spec)));
  const std::lock_guard lock(mutex_);
  if (!reuse) {
    session_ = session;
    session_path_ = spec.model_path;
  }
  service_ = service;
  service_key_ = key;
  if (auto pending = std::exchange(serve_after_load_, std::nullopt)) {
    if (reuse)
      start_serving_locked(*pending);
    else if (events_.stopped)
      events_.stopped(ServingStop::JobRunsAnotherModel, "");
  }
  return {std::move(service), std::move(session), ""};
}

void ModelHost::run_beside(std::function<void()> fn) {
  const std::lock_guard lock(beside_mutex_);
  // Joins the runs that have ended, so finished threads do not pile up.
  std::erase_if(beside_, [](BesideRun& run) {
    if (!run.is_done->load()) return false;
    run.thread.join();
    return true;
  });
  auto is_done = std::make_shared<std::atomic<bool>>(false);
  std::thread thread([fn = std::move(fn), is_done] {
    try {
      fn();
    } catch (...) {
      // a run beside reports its own errors; nothing may escape a thread
    }
    is_done->store(true);
  });
  beside_.push_back({std::move(thread), std::move(is_done)});
}

void ModelHost::wait_for_beside() {
  for (;;) {
    std::list<BesideRun> runs;
    {
      const std::lock_guard lock(beside_mutex_);
      runs.swap(beside_);
    }
    if (runs.empty()) return;
    for (BesideRun& run : runs) run.thread.join();
  }
}

void ModelHost::serve(ServerOptions options, const GenerationSpec& spec) {
  options.defaults = spec.sampling;
  options.defaults.grammar.reset();  // structured output is per request over HTTP
  const std::lock_guard lock(mutex_);
  try {
    stop_serving_locked();  // serving again, with other options
    if (!session_) fail("no model is loaded: open a model first");
    if (!service_ && is_job_loading_) {
      // The job builds the engine: serving starts from it once it is built (not from a second
      // engine beside it).
      serve_after_load_ = options;
      return;
    }
    if (!service_) {
      // Built as a job builds its own: a job with the same options then reuses it.
      service_ = build_service(session_, spec, std::max(4096, 4 * spec.engine.max_num_seqs));
      service_key_ = service_key(spec);
    }
  } catch (const std::exception& e) {
    if (events_.failed) events_.failed(e.what());
    return;
  }
  start_serving_locked(options);
}

std::optional<std::string> ModelHost::stop_serving() {
  const std::lock_guard lock(mutex_);
  serve_after_load_.reset();
  if (!served_) return std::nullopt;
  std::string url = served_->baseUrl();
  stop_serving_locked();
  return url;
}

std::optional<ServerOptions> ModelHost::stop_serving_locked() {
  if (!served_) return std::nullopt;
  ServerOptions options = served_->options();
  options.port = served_->port();  // the same address when it serves again
  served_.reset();
  return options;
}

void ModelHost::start_serving_locked(const ServerOptions& options) {
  try {
    served_ = std::make_unique<ServedModel>(service_, options);
  } catch (const std::exception& e) {
    if (events_.failed) events_.failed(e.what());
    return;
  }
  if (events_.started)
    events_.started(served_->baseUrl(), options.served_model_name, served_->port(), service_);
}

}  // namespace sluice
