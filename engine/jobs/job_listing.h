// Finding the jobs in a directory, for `sluice jobs list`. Job files are named *.sluicejob (the
// app creates them so; other names are still opened by JobStore::open, just not listed).
#pragma once

#include <string>
#include <vector>

#include "engine/jobs/job_info.h"

namespace sluice {

inline constexpr const char* kJobFileExtension = ".sluicejob";

struct JobListing {
  std::string path;
  JobInfo info;
  JobCounts counts;
  std::string error;  // non-empty when the file could not be read; info and counts are then empty
};

// Returns the listing of one job file: its info and counts, or the error that reading it gave.
JobListing read_job_listing(const std::string& path);

// Returns every *.sluicejob file directly in directory, sorted by path, with its info and counts.
// A file that cannot be read is listed with its error instead of failing the whole listing.
// Throws Error naming the directory when it does not exist or cannot be read.
std::vector<JobListing> list_jobs(const std::string& directory);

}  // namespace sluice
