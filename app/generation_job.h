// One run of a model over an instruction file, kept in a job store. Rows are read lazily (a
// bounded window is in the engine at a time, so a 2 GB file never sits in memory), turned into
// prompts, generated with continuous batching, and committed to the job as they finish. A
// resumed job skips every row the store already holds. Used by `sluice generate`, the GUI's
// EngineWorker and the headless demo. Plain C++: the caller chooses the thread.
#pragma once

#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "app/batch_rows.h"
#include "app/generation_spec.h"
#include "app/remote/remote_driver.h"
#include "app/row_schemas.h"
#include "engine/data/dataset_reader.h"
#include "engine/data/prompt_builder.h"
#include "engine/engine.h"
#include "engine/jobs/job_lock.h"
#include "engine/jobs/job_store.h"
#include "engine/model_session.h"
#include "engine/service/engine_service.h"

namespace sluice {

// Rows count here once committed to the job file, never before: what is shown is safe.
struct JobProgress {
  int64_t rows_done = 0;     // finished and committed this run (any status)
  int64_t rows_failed = 0;   // of which failed
  int64_t rows_skipped = 0;  // of which skipped bad rows
  int64_t rows_resumed = 0;  // found finished in the job and not run again
  int64_t rows_in_flight = 0;
  int64_t rows_committing = 0;  // finished, waiting for the commit that announces them
  int64_t rows_total = -1;      // known once the whole file has been read (or counted ahead)
  double file_fraction = 0.0;   // bytes of the input read so far
  // The job file's counts (rows of every run, a resumed job's earlier ones included): what it
  // held when run() started plus this run's commits, so they equal `sluice jobs show`.
  JobCounts job;
};

struct RunSummary {
  JobProgress progress;
  bool is_cancelled = false;
  std::string stop_error;  // a bad row that stopped the job (--on-bad-row stop), or ""
};

// A job runs in one process at a time: create() and resume() take the job's lock (job_lock.h)
// and throw JobInUse, naming the holder's pid, when another process runs it; the lock is held
// until run() returns (or the job is destroyed without running).
class GenerationJob {
 public:
  // A new job stored at job_path, which must not exist yet or be an uninitialised job file (one
  // whose run stopped before its first commit; it holds no rows): load() then replaces it.
  static std::unique_ptr<GenerationJob> create(const GenerationSpec& spec,
                                               const std::string& job_path);
  // Resumes the job at job_path with its stored parameters; device and threads may differ.
  static std::unique_ptr<GenerationJob> resume(const std::string& job_path,
                                               const std::string& device, int num_threads);
  ~GenerationJob();

  // Loads the model and tokenizer (or takes `preloaded`, a session of the same model path
  // loaded earlier), opens the input, and creates the job store (a new job) or checks the
  // model against it (a resumed one). The job's rows go to `service` when given (an engine
  // service over the preloaded session, shared with other clients), else to a service of its
  // own built for the spec's device and engine options. Throws Error, or Cancelled when
  // load_options' progress callback says so.
  void load(const LoadOptions& load_options = {},
            std::shared_ptr<const ModelSession> preloaded = nullptr,
            std::shared_ptr<EngineService> service = nullptr);

  // Generates every row not yet in the job. on_row sees each result once it is committed to the
  // job file (rows finish into the store's queue and are announced a commit at a time), with when
  // its request arrived (seconds since run() started; 0 for skipped rows);
  // on_step runs when the job wakes and the service has stepped since (at least every 100 ms
  // while it runs). While *pause is true the job submits no new row and takes no result: its
  // rows in the engine may finish there, but nothing is committed or announced until the pause
  // ends (the service goes on serving its other clients).
  // Returns when the file is done, the job is cancelled (*cancel; unfinished rows stay pending
  // for a resume) or a bad row stops it.
  RunSummary run(const std::function<void(const RowResult&, double arrival_s)>& on_row,
                 const std::function<void(const StepStats&, const JobProgress&)>& on_step,
                 const std::atomic<bool>* cancel = nullptr,
                 const std::atomic<bool>* pause = nullptr);

  // Generates one committed row again through the job's service (the same parameters and sample
  // key; beside whatever else runs there) and returns its samples, to check that a row does not
  // depend on its batch. May be called on another thread while run() runs or is paused (after
  // load()): it reads the row through its own connection to the job file and shares only the
  // thread-safe service and const state with run(). on_wait (may be empty) is told, in words,
  // what the row waits for: requests ahead of it in the engine's queue (a paused job's rows
  // already there still run), or a full queue (it retries until a place frees). Once *cancel is
  // true the request is aborted (its samples end with "abort"). Throws Error naming the job file
  // and row when the row has no result or was skipped.
  std::vector<SampleResult> run_row_alone(
      int64_t row_index, const std::atomic<bool>* cancel = nullptr,
      const std::function<void(const std::string& reason)>& on_wait = {});

  // Changes where a resumed remote job's requests go (its endpoints, limits, key variable)
  // before load(). Throws Error for a job that runs a local model.
  void change_remote(const std::function<void(RemoteSpec&)>& change);

  // Where notes about the run go while it runs (remote endpoints leaving and rejoining the
  // rotation); may be called from other threads. Set before load().
  void set_on_note(std::function<void(const std::string&)> on_note) {
    on_note_ = std::move(on_note);
  }

  // The process that held the job before and died without releasing it (killed, crashed), whose
  // lock create() or resume() took over; nullopt when the job was free.
  const std::optional<JobLockHolder>& lock_taken_over() const { return lock_taken_over_; }

  // True when create() found an uninitialised job file at the path, which load() replaces.
  bool replaces_uninitialised_job() const { return replaces_uninitialised_job_; }
  // Stored rows that did not read back when load() opened the job; run() generates them again.
  const std::vector<UnreadableRow>& unreadable_rows() const { return unreadable_rows_; }

  const GenerationSpec& spec() const { return spec_; }
  JobStore& store() { return *store_; }  // after load()
  bool is_remote() const { return remote_ != nullptr; }
  const ModelSession& session() const { return *session_; }  // a local job's, after load()
  const RemoteDriver& remote() const { return *remote_; }    // a remote job's, after load()
  std::shared_ptr<const ModelSession> shared_session() const { return session_; }
  EngineService& service() { return *service_; }  // a local job's, after load()
  std::shared_ptr<EngineService> shared_service() const { return service_; }

 private:
  struct PendingRow;
  struct Inbox;
  // A row added to the store and not yet committed, so not yet announced.
  struct UnannouncedRow {
    RowResult result;
    double arrival_s = 0.0;
  };

  GenerationJob(GenerationSpec spec, std::unique_ptr<JobStore> store);
  bool fill_window(JobProgress& progress, RunSummary& summary);
  // Records a bad row (skipped, with row's fields when it was read) or stops, as the spec asks.
  void handle_bad_row(const DatasetRowError& e, JobProgress& progress, RunSummary& summary,
                      const DatasetRow* row = nullptr);
  // Builds a batch line's prompt and sampling into pending; returns false when the line was
  // refused (recorded as a bad row).
  bool build_batch_row(const DatasetRow& row, PendingRow& pending, JobProgress& progress,
                       RunSummary& summary);
  bool submit(std::unique_ptr<PendingRow>& pending, JobProgress& progress, RunSummary& summary);
  // Applies the spec's LongPromptPolicy to a prompt that does not fit the context (a fitting one
  // passes untouched); returns false when the row was recorded (failed or skipped) instead.
  bool fit_context(const DatasetRow& row, BuiltPrompt& prompt, JobProgress& progress);
  void collect(uint64_t row_key, FinishedRequest finished, JobProgress& progress);
  void collect_ready(JobProgress& progress);
  void store_result(const RowResult& result, JobProgress& progress, double arrival_s);
  void flush_and_announce(JobProgress& progress);
  void announce_committed(JobProgress& progress);
  void count_in_job(const RowResult& result, JobCounts& counts);
  std::string model_identity() const;
  // A remote job's load(): the servers instead of a model, text prompts instead of tokens.
  void load_remote();
  size_t window_size() const;
  // The request a pending row (or a stored one, for run_row_alone) is submitted as.
  ServiceRequest request_for(const BuiltPrompt& prompt, const SamplingParams& sampling,
                             int64_t row_index, bool is_chat) const;
  // Returns the rows read so far, bad ones included, within the spec's limit.
  int64_t rows_read() const;

  GenerationSpec spec_;
  std::unique_ptr<JobLock> lock_;  // held from create()/resume() until run() returns
  std::optional<JobLockHolder> lock_taken_over_;
  std::string job_path_;  // a new job's file, created by load()
  std::unique_ptr<JobStore> store_;
  bool is_resume_ = false;
  bool replaces_uninitialised_job_ = false;
  std::vector<UnreadableRow> unreadable_rows_;
  std::unordered_set<int64_t> unreadable_row_indices_;  // counted as unreadable in the file
  std::deque<UnannouncedRow> unannounced_;
  std::shared_ptr<const ModelSession> session_;
  std::shared_ptr<EngineService> service_;  // a local job's
  std::shared_ptr<RemoteDriver> remote_;    // a remote job's
  RequestService* requests_ = nullptr;      // whichever of the two runs the rows
  std::function<void(const std::string&)> on_note_;
  std::shared_ptr<Inbox> inbox_;  // shared with the streams' callbacks
  std::unique_ptr<DatasetReader> reader_;
  std::unique_ptr<PromptBuilder> prompt_builder_;
  std::unique_ptr<RowSchemas> row_schemas_;  // when the spec names a schema column
  std::unique_ptr<BatchRows> batch_rows_;    // when the input is an OpenAI Batch file
  std::unordered_map<int64_t, bool> finished_rows_;
  std::unordered_map<uint64_t, std::unique_ptr<PendingRow>> in_flight_;  // by row key
  std::unique_ptr<PendingRow> deferred_;  // read while the service's queue was full
  uint64_t next_row_key_ = 1;
  double arrival_origin_s_ = 0.0;  // the service's clock when run() started
  std::function<void(const RowResult&, double)> on_row_;
  bool is_reader_done_ = false;
  bool is_stopping_ = false;
  int64_t last_row_index_ = -1;
};

// Returns the row as `sluice generate` writes it: id (the input's "id" or the row index),
// prompt, prompt_tokens, output, output_tokens, finish_reason (or samples for n > 1), timings,
// error, and output_token_ids when kept.
nlohmann::ordered_json output_row_json(const RowResult& result);

// Serialises an output row as one JSONL line (invalid UTF-8 replaced, never thrown on).
std::string dump_jsonl_row(const nlohmann::ordered_json& row);

}  // namespace sluice
