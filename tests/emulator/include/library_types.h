// The CPU kernel emulator's stand-in for <library_types.h>: the data types cuBLAS is told.
#pragma once

enum cudaDataType_t {
  CUDA_R_32F = 0,
  CUDA_R_16F = 2,
  CUDA_R_16BF = 14,
};
typedef cudaDataType_t cudaDataType;

enum libraryPropertyType_t {
  MAJOR_VERSION = 0,
  MINOR_VERSION = 1,
  PATCH_LEVEL = 2,
};
typedef libraryPropertyType_t libraryPropertyType;
