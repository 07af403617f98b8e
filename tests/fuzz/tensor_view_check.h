// The property every model reader promises for the tensors it hands over: each one's bytes lie
// inside the mapped file, and a tensor of a type Sluice computes with has exactly the bytes its
// shape needs (so a loader that trusts num_bytes or the shape never reads past the map).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/dtype.h"
#include "engine/core/mapped_file.h"

namespace sluice::fuzz {

// Aborts unless [data, data + num_bytes) lies inside file and, when dtype is set, num_bytes is
// the size of shape's elements in dtype (computed without overflow).
void check_tensor_view(const MappedFile& file, const std::string& name,
                       const std::vector<int64_t>& shape, std::optional<DType> dtype,
                       const uint8_t* data, size_t num_bytes);

}  // namespace sluice::fuzz
