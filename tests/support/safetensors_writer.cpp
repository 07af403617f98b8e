#include "tests/support/safetensors_writer.h"

#include <cstring>
#include <nlohmann/json.hpp>

#include "tests/support/test_paths.h"

namespace sluice::test {

void write_safetensors(const std::string& path, const std::vector<SafetensorsTensor>& tensors) {
  nlohmann::ordered_json header;
  size_t offset = 0;
  for (const auto& t : tensors) {
    header[t.name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {offset, offset + t.bytes.size()}}};
    offset += t.bytes.size();
  }
  std::string json = header.dump();
  while ((json.size() + 8) % 8 != 0) json.push_back(' ');
  std::string out(8, '\0');
  const uint64_t length = json.size();
  std::memcpy(out.data(), &length, 8);
  out += json;
  for (const auto& t : tensors) out += t.bytes;
  write_file(path, out);
}

}  // namespace sluice::test
