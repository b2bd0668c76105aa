// Test-only kernels that prove the probe runner's isolation: one writes through a wild pointer
// (CUDA_ERROR_ILLEGAL_ADDRESS), one spins on a flag nothing sets (killed by the runner's timeout).
// Compiled into the test fatbin (tests/CMakeLists.txt), embedded in specprobe_testlib only.
#include <stdint.h>

extern "C" __global__ void probe_fault_kernel(uint64_t wild) {
  *reinterpret_cast<volatile int*>(wild + 4 * threadIdx.x) = 1;
}

extern "C" __global__ void probe_hang_kernel(uint64_t flag) {
  while (*reinterpret_cast<const volatile int*>(flag) == 0) __nanosleep(1000);
}
