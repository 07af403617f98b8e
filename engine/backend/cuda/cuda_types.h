// The device element types behind ActivationDType, in one place: the C++ type the kernels are
// instantiated for and the cudaDataType cuBLAS is told. Code that is generic over the activation
// type is written once as a template and entered through visit_activation_type.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <library_types.h>

#include "engine/backend/cuda/cuda_backend.h"
#include "engine/core/error.h"

namespace sluice {

template <typename T>
struct TypeTag {
  using type = T;
};

// Calls fn(TypeTag<T>{}) with T the activation type of dtype and returns what it returns.
template <typename Fn>
decltype(auto) visit_activation_type(ActivationDType dtype, Fn&& fn) {
  switch (dtype) {
    case ActivationDType::F32:
      return fn(TypeTag<float>{});
    case ActivationDType::F16:
      return fn(TypeTag<__half>{});
    case ActivationDType::BF16:
      return fn(TypeTag<__nv_bfloat16>{});
  }
  fail("unknown activation type ", static_cast<int>(dtype));
}

inline cudaDataType cuda_data_type(ActivationDType dtype) {
  switch (dtype) {
    case ActivationDType::F32:
      return CUDA_R_32F;
    case ActivationDType::F16:
      return CUDA_R_16F;
    case ActivationDType::BF16:
      return CUDA_R_16BF;
  }
  return CUDA_R_32F;
}

}  // namespace sluice
