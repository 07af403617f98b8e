// Points the CUDA backend's cuBLAS loader at the emulated cuBLAS (unless SLUICE_CUBLAS is set),
// before any test runs.
#include <cstdlib>

namespace {

const bool kIsCublasPathSet = [] {
  setenv("SLUICE_CUBLAS", SLUICE_EMULATED_CUBLAS_PATH, /*overwrite=*/0);
  return true;
}();

}  // namespace
