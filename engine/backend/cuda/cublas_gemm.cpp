#include "engine/backend/cuda/cublas_gemm.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <vector>

#include "engine/backend/cuda/cuda_check.h"
#include "engine/core/error.h"

namespace sluice {

namespace {

// Where libcublas.so.<major> may be: the loader's path first, then the usual toolkit folders
// (a toolkit under /usr/local/cuda is often not in ld.so.conf). SLUICE_CUBLAS names a file.
std::vector<std::string> cublas_candidates() {
  const std::string soname = "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR);
  std::vector<std::string> out;
  if (const char* explicit_path = std::getenv("SLUICE_CUBLAS")) out.emplace_back(explicit_path);
  out.push_back(soname);
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
    if (const char* dir = std::getenv(var)) out.push_back(std::string(dir) + "/lib64/" + soname);
  }
  for (const char* dir : {"/usr/local/cuda/lib64/", "/usr/local/cuda/targets/x86_64-linux/lib/",
                          "/usr/lib/x86_64-linux-gnu/"}) {
    out.push_back(dir + soname);
  }
  return out;
}

template <typename Fn>
void resolve(void* library, const char* symbol, Fn& fn, const std::string& path) {
  fn = reinterpret_cast<Fn>(dlsym(library, symbol));
  if (!fn)
    fail("cuBLAS: ", path, " lacks ", symbol, " (a cuBLAS ", CUBLAS_VER_MAJOR, " is needed)");
}

CublasApi load_cublas() {
  std::string tried;
  void* library = nullptr;
  std::string path;
  for (const std::string& candidate : cublas_candidates()) {
    // Kept for the life of the process: handles and graphs refer to its code.
    library = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (library) {
      path = candidate;
      break;
    }
    const char* why = dlerror();
    tried += str_cat("\n  ", candidate, ": ", why ? why : "not found");
  }
  if (!library) {
    fail("cuBLAS ", CUBLAS_VER_MAJOR,
         " could not be loaded; install the CUDA toolkit's cuBLAS or set SLUICE_CUBLAS to "
         "libcublas.so.",
         CUBLAS_VER_MAJOR, ". Tried:", tried);
  }
  CublasApi api;
  api.library_path = path;
  resolve(library, "cublasCreate_v2", api.create, path);
  resolve(library, "cublasDestroy_v2", api.destroy, path);
  resolve(library, "cublasSetStream_v2", api.set_stream, path);
  resolve(library, "cublasSetWorkspace_v2", api.set_workspace, path);
  resolve(library, "cublasSetMathMode", api.set_math_mode, path);
  resolve(library, "cublasGemmEx", api.gemm_ex, path);
  resolve(library, "cublasGetStatusString", api.status_string, path);
  resolve(library, "cublasGetProperty", api.get_property, path);
  int major = 0;
  if (api.get_property(MAJOR_VERSION, &major) != CUBLAS_STATUS_SUCCESS || major != CUBLAS_VER_MAJOR)
    fail("cuBLAS: ", path, " is version ", major, "; this build needs ", CUBLAS_VER_MAJOR);
  return api;
}

}  // namespace

const CublasApi& CublasApi::get() {
  // A failed load is retried on the next call (the error may be fixed by setting SLUICE_CUBLAS).
  static std::mutex mutex;
  static CublasApi api;
  static bool is_loaded = false;
  const std::lock_guard lock(mutex);
  if (!is_loaded) {
    api = load_cublas();
    is_loaded = true;
  }
  return api;
}

void throw_cublas_error(const char* call, const char* file, int line, cublasStatus_t status) {
  const char* text = CublasApi::get().status_string ? CublasApi::get().status_string(status) : "";
  fail("cuBLAS error: ", call, " at ", cuda_detail::short_path(file), ":", line, ": ", text, " (",
       static_cast<int>(status), ")");
}

CublasGemm::CublasGemm(cudaStream_t stream, size_t workspace_bytes)
    : api_(CublasApi::get()), workspace_bytes_(workspace_bytes) {
  SLUICE_CUBLAS_CHECK(api_.create(&handle_));
  try {
    SLUICE_CUBLAS_CHECK(api_.set_stream(handle_, stream));
    // No reduced-precision split-K reductions: 16-bit outputs are rounded once, from fp32.
    SLUICE_CUBLAS_CHECK(api_.set_math_mode(
        handle_, static_cast<cublasMath_t>(CUBLAS_DEFAULT_MATH |
                                           CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION)));
    if (workspace_bytes_ > 0) {
      SLUICE_CUDA_CHECK(cudaMalloc(&workspace_, workspace_bytes_));
      SLUICE_CUBLAS_CHECK(api_.set_workspace(handle_, workspace_, workspace_bytes_));
    }
  } catch (...) {
    api_.destroy(handle_);
    if (workspace_) cudaFree(workspace_);
    throw;
  }
}

CublasGemm::~CublasGemm() {
  api_.destroy(handle_);
  if (workspace_) cudaFree(workspace_);
}

void CublasGemm::linear(const void* x, const void* w, void* y, int num_rows, int in_features,
                        int out_features, cudaDataType ab_type, cudaDataType y_type,
                        int x_row_stride, int y_row_stride) const {
  if (num_rows == 0) return;
  const float alpha = 1.0f;
  const float beta = 0.0f;
  SLUICE_CUBLAS_CHECK(api_.gemm_ex(
      handle_, CUBLAS_OP_T, CUBLAS_OP_N, out_features, num_rows, in_features, &alpha, w, ab_type,
      in_features, x, ab_type, x_row_stride > 0 ? x_row_stride : in_features, &beta, y, y_type,
      y_row_stride > 0 ? y_row_stride : out_features, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

}  // namespace sluice
