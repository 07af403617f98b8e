#include "engine/jobs/job_listing.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "engine/core/error.h"
#include "engine/jobs/job_store.h"

namespace sluice {

JobListing read_job_listing(const std::string& path) {
  JobListing listing;
  listing.path = path;
  try {
    const auto job = JobStore::open(path);
    listing.info = job->info();
    listing.counts = job->counts();
  } catch (const Error& e) {
    listing.info = {};
    listing.counts = {};
    listing.error = e.what();
  }
  return listing;
}

std::vector<JobListing> list_jobs(const std::string& directory) {
  namespace fs = std::filesystem;
  std::error_code error;
  if (!fs::is_directory(directory, error)) fail(directory, ": not a directory");
  std::vector<JobListing> listings;
  fs::directory_iterator it(directory, error);
  if (error) fail(directory, ": cannot list: ", error.message());
  for (; it != fs::directory_iterator(); it.increment(error)) {
    if (error) fail(directory, ": cannot list: ", error.message());
    if (it->path().extension() != kJobFileExtension) continue;
    listings.push_back(read_job_listing(it->path().string()));
  }
  if (error) fail(directory, ": cannot list: ", error.message());
  std::sort(listings.begin(), listings.end(),
            [](const JobListing& a, const JobListing& b) { return a.path < b.path; });
  return listings;
}

}  // namespace sluice
