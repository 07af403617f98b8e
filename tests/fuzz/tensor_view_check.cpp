#include "tests/fuzz/tensor_view_check.h"

#include "engine/core/error.h"
#include "tests/fuzz/fuzz_check.h"

namespace sluice::fuzz {
namespace {

// -Wpedantic accepts the compiler extension only when it is marked as one.
__extension__ using Uint128 = unsigned __int128;

// The exact byte count of num_elements values of dtype; 128-bit so that no shape overflows it.
Uint128 exact_num_bytes(DType dtype, Uint128 num_elements) {
  const DTypeTraits& traits = dtype_traits(dtype);
  return num_elements / static_cast<Uint128>(traits.block_elements) * traits.block_bytes;
}

}  // namespace

void check_tensor_view(const MappedFile& file, const std::string& name,
                       const std::vector<int64_t>& shape, std::optional<DType> dtype,
                       const uint8_t* data, size_t num_bytes) {
  const uint8_t* begin = file.data();
  const uint8_t* end = begin + file.size();
  fuzz_require(num_bytes == 0 ||
                   (data >= begin && data <= end && num_bytes <= static_cast<size_t>(end - data)),
               str_cat("tensor ", name, ": ", num_bytes, " bytes at offset ", data - begin,
                       " run past the file's ", file.size(), " bytes"));
  if (!dtype) return;
  Uint128 num_elements = 1;
  for (const int64_t dim : shape) {
    fuzz_require(dim >= 0, str_cat("tensor ", name, ": negative dimension ", dim));
    num_elements *= static_cast<uint64_t>(dim);
    // Past 2^64 elements the product itself would need care; no valid file gets there.
    fuzz_require(num_elements >> 64 == 0, str_cat("tensor ", name, ": shape overflows"));
  }
  fuzz_require(exact_num_bytes(*dtype, num_elements) == num_bytes,
               str_cat("tensor ", name, " of ", dtype_name(*dtype), ": ", num_bytes,
                       " bytes, not what its shape holds"));
}

}  // namespace sluice::fuzz
