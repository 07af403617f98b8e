// One writer per job: a process that runs a job (`sluice generate --job/--resume`, the desktop
// app) holds an exclusive flock on "<job>.lock" beside the job file while it may add rows, so a
// second process refuses the job instead of computing (or, remote, paying for) every row again.
//
// Why a lock file and flock: the kernel drops a flock when its holder dies, so a crash or kill -9
// never leaves a lock that blocks; flock and SQLite's own fcntl locks are independent, and a file
// of its own keeps the job file untouched by whoever is merely asked. The holder writes its pid,
// host and start time into the lock file, so a refused process can name it; a clean release
// removes the file, so a record found by the next taker was left by a holder that died, and is
// reported as taken over. Readers (`jobs show`, `jobs list`, `jobs export`) take no lock.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "engine/core/error.h"

namespace sluice {

// What a lock file says about the process that holds (or held) a job.
struct JobLockHolder {
  int64_t pid = 0;    // 0 when the record could not be read
  std::string host;   // the holder's host name
  std::string since;  // ISO 8601 UTC, when it took the job
};

// Thrown by JobLock::acquire when another process holds the job; the message names the job file
// and the holder's pid.
class JobInUse : public Error {
 public:
  JobInUse(const std::string& message, JobLockHolder holder)
      : Error(message), holder_(std::move(holder)) {}
  const JobLockHolder& holder() const { return holder_; }

 private:
  JobLockHolder holder_;
};

class JobLock {
 public:
  // Takes the lock of the job at job_path (the job file need not exist yet; a directory there is
  // refused). Throws JobInUse naming job_path and the holder's pid when another process (or
  // another JobLock of this one) holds it, Error naming the lock file when it cannot be created.
  static std::unique_ptr<JobLock> acquire(const std::string& job_path);

  // Removes the lock file, then releases the lock.
  ~JobLock();
  JobLock(const JobLock&) = delete;
  JobLock& operator=(const JobLock&) = delete;

  // The record a holder that died without releasing the job left behind, which acquire() found
  // and replaced; nullopt when the job was free.
  const std::optional<JobLockHolder>& taken_over() const { return taken_over_; }
  const std::string& lock_path() const { return lock_path_; }

 private:
  JobLock(std::string lock_path, int fd, std::optional<JobLockHolder> taken_over);

  std::string lock_path_;
  int fd_ = -1;
  std::optional<JobLockHolder> taken_over_;
};

// What a reader can tell of a job's lock without taking it (taking it, even briefly, could refuse
// a process starting the job at that moment): the record, and whether its process runs.
struct JobLockStatus {
  enum class State : uint8_t {
    Free,       // no lock file: no process runs the job, and the last one released it
    Running,    // a process on this host runs the job (its pid is alive)
    Abandoned,  // the record's process (on this host) is gone: killed or crashed mid-run
    Unknown,    // the record names another host, or no process (a taker between creating the
                // file and writing its record): whether it runs cannot be told from here
  };
  State state = State::Free;
  JobLockHolder holder;  // the record, for any state but Free
};

// Returns the status of the lock of the job at job_path, reading its lock file only.
JobLockStatus inspect_job_lock(const std::string& job_path);

// Returns the path of the lock file of the job at job_path: "<job_path>.lock".
std::string job_lock_path(const std::string& job_path);

// Returns a sentence naming holder for messages: "process 1234 on host h (since ...)"; the host
// is left out when it is this one.
std::string describe_job_lock_holder(const JobLockHolder& holder);

}  // namespace sluice
