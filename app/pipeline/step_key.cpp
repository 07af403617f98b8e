#include "app/pipeline/step_key.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <vector>

#include "app/pipeline/whole_file.h"
#include "engine/core/error.h"
#include "engine/core/json_parse.h"
#include "engine/core/mapped_file.h"
#include "engine/core/sha256.h"

namespace sluice {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

std::string step_key(const Json& parts) {
  return sha256_hex(parts.dump());
}

Json spec_key_parts(const GenerationSpec& spec) {
  Json j = spec_to_json(spec);
  j.erase("device");
  return j;
}

namespace {

// The files a digest covers: the file itself, or a folder's regular files in name order.
std::vector<fs::path> digest_files(const fs::path& path) {
  if (!fs::is_directory(path)) return {path};
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(path))
    if (entry.is_regular_file()) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

// "<size>:<mtime ns>" of each file: a change of either hashes again.
std::string stamp_of(const std::vector<fs::path>& files) {
  std::string stamp;
  for (const fs::path& f : files) {
    std::error_code ec;
    const auto size = fs::file_size(f, ec);
    if (ec) fail(f.string(), ": cannot be read: ", ec.message());
    const auto mtime = fs::last_write_time(f, ec).time_since_epoch().count();
    stamp += str_cat(f.filename().string(), ":", size, ":", mtime, ";");
  }
  return stamp;
}

}  // namespace

std::string file_digest(const std::string& path, const std::string& cache_path) {
  if (!fs::exists(path)) fail(path, ": not found");
  const std::vector<fs::path> files = digest_files(path);
  const std::string stamp = stamp_of(files);
  const std::string key = fs::absolute(path).lexically_normal().string();
  Json cache = Json::object();
  if (fs::exists(cache_path)) {
    Json read;
    if (!try_parse_json(read_text_file(cache_path), read) && read.is_object()) cache = read;
  }
  if (cache.contains(key) && cache[key].is_object() && cache[key].value("stamp", "") == stamp &&
      cache[key].contains("sha256"))
    return cache[key]["sha256"].get<std::string>();
  std::string digest;
  if (files.size() == 1 && files.front() == fs::path(path)) {
    digest = sha256_file_hex(path);
  } else {
    Json per_file = Json::array();
    for (const fs::path& f : files)
      per_file.push_back({f.filename().string(), sha256_file_hex(f.string())});
    digest = sha256_hex(per_file.dump());
  }
  cache[key] = {{"stamp", stamp}, {"sha256", digest}};
  write_whole_file(cache_path, cache.dump(1) + "\n");
  return digest;
}

}  // namespace sluice
