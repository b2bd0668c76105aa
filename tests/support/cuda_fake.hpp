// A scripted stand-in for libcuda: the same function table, answered from a FakeScript, so CI
// (no GPU) covers the driver layer, `specprobe gpu` and error reporting. Never touches a GPU.
// Test-only (specprobe_testlib): the product loads the real driver (gpu/cuda_api.hpp).
// One script is active per process (the table holds plain function pointers).
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gpu/cuda_api.hpp"

namespace specprobe::cu {

struct FakeGpu {
  std::string name = "NVIDIA H200";
  int cc_major = 9;
  int cc_minor = 0;
  int sm_count = 132;
  int smem_optin = 232448;
  int smem_per_sm = 233472;
  int l2_bytes = 52428800;
  size_t memory_bytes = 150754820096ull;
  int memory_clock_khz = 3201000;
  int bus_width_bits = 6144;
  int max_threads_per_sm = 2048;
  int regs_per_sm = 65536;
  unsigned char uuid[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  std::string pci_bus_id = "0000:19:00.0";
};

struct FakeScript {
  CUresult init_result = kSuccess;
  int driver_version = 13000;
  std::vector<FakeGpu> gpus{FakeGpu{}};
  // Calls (by function name, e.g. "cuDeviceGetUuid") that fail with the given result.
  std::map<std::string, CUresult> failing;
};

// Installs `script` as the process's fake and returns a Driver over the fake table.
std::shared_ptr<Driver> make_fake_driver(FakeScript script);

}  // namespace specprobe::cu
