#include "engine/core/system_memory.h"

#include <fstream>
#include <string>

namespace sluice {

size_t available_system_memory_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  size_t kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit) {
    if (key == "MemAvailable:") return kib * 1024;
  }
  return 0;
}

}  // namespace sluice
