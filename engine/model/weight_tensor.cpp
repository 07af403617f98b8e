#include "engine/model/weight_tensor.h"

namespace sluice {

int64_t WeightTensor::num_elements() const {
  int64_t n = 1;
  for (const int64_t d : shape) n *= d;
  return shape.empty() ? 0 : n;
}

}  // namespace sluice
