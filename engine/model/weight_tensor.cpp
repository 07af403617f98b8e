#include "engine/model/weight_tensor.h"

#include "engine/core/error.h"

namespace sluice {

int64_t WeightTensor::num_elements() const {
  int64_t n = 1;
  for (const int64_t d : shape) n *= d;
  return shape.empty() ? 0 : n;
}

WeightTensor expert_slice(const WeightTensor& stack, int expert) {
  WeightTensor view = stack;
  view.name = str_cat(stack.name, " (expert ", expert, ")");
  view.shape.erase(view.shape.begin());
  view.num_bytes = stack.num_bytes / static_cast<size_t>(stack.shape[0]);
  view.data = stack.data + static_cast<size_t>(expert) * view.num_bytes;
  return view;
}

}  // namespace sluice
