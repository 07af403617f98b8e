#include "engine/jobs/job_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <system_error>
#include <utility>

#include "engine/jobs/abandoned_files.h"
#include "engine/jobs/job_info.h"

namespace sluice {
namespace {

// A lock file's record is a line of JSON; anything longer is not one of ours.
constexpr size_t kMaxRecordBytes = 4096;
// acquire() starts again when the lock file it locked was removed by a holder releasing it; a
// release per try is all that can make it start again, so a few tries always suffice.
constexpr int kMaxAcquireTries = 16;

std::string this_host() {
  char name[HOST_NAME_MAX + 1] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0) return "?";
  return name;
}

// Returns the record in the lock file open at fd, or nullopt when it is empty. A record that
// does not parse (a damaged file, a holder killed while writing it) reads as pid 0.
std::optional<JobLockHolder> read_record(int fd) {
  std::string text(kMaxRecordBytes, '\0');
  const ssize_t num_bytes = ::pread(fd, text.data(), text.size(), 0);
  if (num_bytes <= 0) return std::nullopt;
  text.resize(static_cast<size_t>(num_bytes));
  JobLockHolder holder;
  const auto json = nlohmann::json::parse(text, nullptr, false);
  if (json.is_object()) {
    const auto pid = json.find("pid");
    if (pid != json.end() && pid->is_number_integer()) holder.pid = pid->get<int64_t>();
    holder.host = json.value("host", std::string());
    holder.since = json.value("since", std::string());
  }
  return holder;
}

void write_record(int fd, const std::string& lock_path) {
  const nlohmann::json record = {{"pid", static_cast<int64_t>(::getpid())},
                                 {"host", this_host()},
                                 {"since", utc_timestamp_now()}};
  const std::string text = record.dump() + "\n";
  if (::ftruncate(fd, 0) != 0 ||
      ::pwrite(fd, text.data(), text.size(), 0) != static_cast<ssize_t>(text.size()))
    fail(lock_path, ": cannot write the job's lock file: ", std::strerror(errno));
}

// True when fd is still the file at path: a holder that releases the job removes its lock file,
// and a lock taken on a removed file guards nothing.
bool is_still_at(int fd, const std::string& path) {
  struct stat open_stat {};
  struct stat path_stat {};
  if (::fstat(fd, &open_stat) != 0 || ::stat(path.c_str(), &path_stat) != 0) return false;
  return open_stat.st_dev == path_stat.st_dev && open_stat.st_ino == path_stat.st_ino;
}

[[noreturn]] void fail_in_use(const std::string& job_path,
                              const std::optional<JobLockHolder>& record) {
  const JobLockHolder holder = record.value_or(JobLockHolder{});
  if (holder.pid <= 0) {
    throw JobInUse(
        str_cat(job_path, ": in use by another process (its lock file ", job_lock_path(job_path),
                " names no process yet): one job runs in one process at a time"),
        holder);
  }
  if (holder.pid == ::getpid() && holder.host == this_host()) {
    throw JobInUse(str_cat(job_path, ": already running in this process (pid ", holder.pid,
                           "): one job runs once at a time"),
                   holder);
  }
  throw JobInUse(str_cat(job_path, ": in use by ", describe_job_lock_holder(holder),
                         ": one job runs in one process at a time; wait for it to finish or stop "
                         "it (kill ",
                         holder.pid, "), then resume"),
                 holder);
}

}  // namespace

std::string job_lock_path(const std::string& job_path) {
  return job_path + ".lock";
}

std::string describe_job_lock_holder(const JobLockHolder& holder) {
  if (holder.pid <= 0) return "a process whose record does not read back";
  std::string text = str_cat("process ", holder.pid);
  if (!holder.host.empty() && holder.host != this_host()) text += str_cat(" on host ", holder.host);
  if (!holder.since.empty()) text += str_cat(" (since ", holder.since, ")");
  return text;
}

JobLockStatus inspect_job_lock(const std::string& job_path) {
  JobLockStatus status;
  const int fd = ::open(job_lock_path(job_path).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return status;
  const std::optional<JobLockHolder> record = read_record(fd);
  ::close(fd);
  status.holder = record.value_or(JobLockHolder{});
  if (status.holder.pid <= 0 ||
      (!status.holder.host.empty() && status.holder.host != this_host())) {
    status.state = JobLockStatus::State::Unknown;
  } else if (is_process_running(status.holder.pid)) {
    status.state = JobLockStatus::State::Running;
  } else {
    status.state = JobLockStatus::State::Abandoned;
  }
  return status;
}

std::unique_ptr<JobLock> JobLock::acquire(const std::string& job_path) {
  std::error_code error;
  const auto status = std::filesystem::status(job_path, error);
  // Checked first: "<dir>.lock" beside a directory would be a stray file, and the error a person
  // needs is that a job is a file.
  if (std::filesystem::is_directory(status)) {
    fail(job_path, ": is a directory, not a job file; give the path of a job file (such as ",
         (std::filesystem::path(job_path) / "run.sluicejob").string(), ")");
  }
  const std::string lock_path = job_lock_path(job_path);
  for (int attempt = 0; attempt < kMaxAcquireTries; ++attempt) {
    // O_CLOEXEC: a program the holder starts must not inherit (and outlive it with) the lock.
    const int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0 && errno == ENOENT) {
      const std::filesystem::path parent = std::filesystem::path(job_path).parent_path();
      fail(job_path, ": no such directory ", parent.empty() ? std::string(".") : parent.string());
    }
    if (fd < 0) fail(lock_path, ": cannot create the job's lock file: ", std::strerror(errno));
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int flock_errno = errno;
      const std::optional<JobLockHolder> record = read_record(fd);
      ::close(fd);
      if (flock_errno == EWOULDBLOCK) fail_in_use(job_path, record);
      fail(lock_path, ": cannot lock the job: ", std::strerror(flock_errno));
    }
    if (!is_still_at(fd, lock_path)) {
      ::close(fd);
      continue;
    }
    // A holder that released the job removed its file: a record here is a dead holder's.
    std::optional<JobLockHolder> taken_over = read_record(fd);
    try {
      write_record(fd, lock_path);
    } catch (...) {
      ::close(fd);
      throw;
    }
    return std::unique_ptr<JobLock>(new JobLock(lock_path, fd, std::move(taken_over)));
  }
  fail(lock_path, ": cannot lock the job: its lock file kept being replaced (", kMaxAcquireTries,
       " tries)");
}

JobLock::JobLock(std::string lock_path, int fd, std::optional<JobLockHolder> taken_over)
    : lock_path_(std::move(lock_path)), fd_(fd), taken_over_(std::move(taken_over)) {}

JobLock::~JobLock() {
  // Removed while still locked: whoever opened this file meanwhile finds it gone once it gets
  // the lock, and starts again on a new one (see is_still_at). Only if it is still ours: after a
  // hand removal the path may be another holder's file.
  if (is_still_at(fd_, lock_path_)) ::unlink(lock_path_.c_str());
  ::close(fd_);
}

}  // namespace sluice
