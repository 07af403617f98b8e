#include "app/pipeline/whole_file.h"

#include <filesystem>
#include <fstream>

#include "engine/core/error.h"

namespace sluice {

void write_whole_file(const std::string& path, const std::string& text) {
  const std::string temporary = path + ".writing";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out) fail(temporary, ": cannot be written");
  }
  std::error_code ec;
  std::filesystem::rename(temporary, path, ec);
  if (ec) fail(path, ": cannot be written: ", ec.message());
}

}  // namespace sluice
