// The most capable instruction set a process's CPU kernels may use. By default the CPU's own
// best; the SLUICE_CPU_KERNELS environment variable caps it ("avx2": no AVX-512, "portable": no
// x86 SIMD), so that the AVX2 or portable kernels can be measured or checked on a CPU that has
// more. Both kernel choices honour it: the fixed-order float products (cpu_gemm.h) and the
// quantized ones (cpu_quant_dot.h). Read once per process.
#pragma once

namespace sluice {

enum class CpuKernelCeiling { kNative, kAvx2, kPortable };

// The ceiling SLUICE_CPU_KERNELS sets: unset, empty or "native" is kNative. Any other value is
// reported once on stderr (naming the variable and the values it takes) and read as kNative.
CpuKernelCeiling cpu_kernel_ceiling();

// The ceiling a value of SLUICE_CPU_KERNELS names, or false for a value it does not take.
bool parse_cpu_kernel_ceiling(const char* value, CpuKernelCeiling& out);

}  // namespace sluice
