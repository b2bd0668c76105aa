// The scripted libcuda stand-in (see cuda_fake.hpp). Context, module and memory calls report
// CUDA_ERROR_NOT_SUPPORTED-like failures: the fake answers queries, it runs no kernels.
#include "support/cuda_fake.hpp"

#include <cstring>

namespace specprobe::cu {
namespace {

FakeScript g_script;
bool g_inited = false;

CUresult failing(const char* fn) {
  auto it = g_script.failing.find(fn);
  return it == g_script.failing.end() ? kSuccess : it->second;
}

#define SP_FAKE_FAIL(fn) \
  if (CUresult r_ = failing(fn); r_ != 0) return r_;
#define SP_FAKE_DEV(dev)                                                                        \
  if ((dev) < 0 || (dev) >= static_cast<int>(g_script.gpus.size())) return kErrorInvalidDevice; \
  const FakeGpu& g = g_script.gpus[static_cast<size_t>(dev)];

CUresult f_init(unsigned) {
  SP_FAKE_FAIL("cuInit");
  if (g_script.init_result != kSuccess) return g_script.init_result;
  g_inited = true;
  return kSuccess;
}
CUresult f_driver_version(int* v) {
  SP_FAKE_FAIL("cuDriverGetVersion");
  *v = g_script.driver_version;
  return kSuccess;
}
CUresult f_count(int* n) {
  SP_FAKE_FAIL("cuDeviceGetCount");
  if (!g_inited) return kErrorNotInitialized;
  *n = static_cast<int>(g_script.gpus.size());
  return kSuccess;
}
CUresult f_get(CUdevice* d, int ordinal) {
  SP_FAKE_FAIL("cuDeviceGet");
  if (ordinal < 0 || ordinal >= static_cast<int>(g_script.gpus.size())) return kErrorInvalidDevice;
  *d = ordinal;
  return kSuccess;
}
CUresult f_name(char* out, int len, CUdevice dev) {
  SP_FAKE_FAIL("cuDeviceGetName");
  SP_FAKE_DEV(dev);
  std::strncpy(out, g.name.c_str(), static_cast<size_t>(len) - 1);
  out[len - 1] = 0;
  return kSuccess;
}
CUresult f_attr(int* v, int attr, CUdevice dev) {
  SP_FAKE_FAIL("cuDeviceGetAttribute");
  SP_FAKE_DEV(dev);
  switch (attr) {
    case kAttrMultiprocessorCount:
      *v = g.sm_count;
      break;
    case kAttrComputeCapabilityMajor:
      *v = g.cc_major;
      break;
    case kAttrComputeCapabilityMinor:
      *v = g.cc_minor;
      break;
    case kAttrMaxSharedMemoryPerBlockOptin:
      *v = g.smem_optin;
      break;
    case kAttrMaxSharedMemoryPerMultiprocessor:
      *v = g.smem_per_sm;
      break;
    case kAttrL2CacheSize:
      *v = g.l2_bytes;
      break;
    case kAttrMemoryClockRate:
      *v = g.memory_clock_khz;
      break;
    case kAttrGlobalMemoryBusWidth:
      *v = g.bus_width_bits;
      break;
    case kAttrMaxThreadsPerMultiprocessor:
      *v = g.max_threads_per_sm;
      break;
    case kAttrMaxRegistersPerMultiprocessor:
      *v = g.regs_per_sm;
      break;
    default:
      return kErrorInvalidValue;
  }
  return kSuccess;
}
CUresult f_total_mem(size_t* b, CUdevice dev) {
  SP_FAKE_FAIL("cuDeviceTotalMem");
  SP_FAKE_DEV(dev);
  *b = g.memory_bytes;
  return kSuccess;
}
CUresult f_uuid(unsigned char* u, CUdevice dev) {
  SP_FAKE_FAIL("cuDeviceGetUuid");
  SP_FAKE_DEV(dev);
  std::memcpy(u, g.uuid, 16);
  return kSuccess;
}
CUresult f_pci(char* out, int len, CUdevice dev) {
  SP_FAKE_FAIL("cuDeviceGetPCIBusId");
  SP_FAKE_DEV(dev);
  std::strncpy(out, g.pci_bus_id.c_str(), static_cast<size_t>(len) - 1);
  out[len - 1] = 0;
  return kSuccess;
}
// The fake runs nothing: creating a context is the point where it stops.
CUresult f_ctx_create(CUcontext*, unsigned, CUdevice) {
  SP_FAKE_FAIL("cuCtxCreate");
  return kErrorNoDevice;
}

}  // namespace

std::shared_ptr<Driver> make_fake_driver(FakeScript script) {
  g_script = std::move(script);
  g_inited = false;
  Api a;
  a.cuInit = f_init;
  a.cuDriverGetVersion = f_driver_version;
  a.cuDeviceGetCount = f_count;
  a.cuDeviceGet = f_get;
  a.cuDeviceGetName = f_name;
  a.cuDeviceGetAttribute = f_attr;
  a.cuDeviceTotalMem = f_total_mem;
  a.cuDeviceGetUuid = f_uuid;
  a.cuDeviceGetPCIBusId = f_pci;
  a.cuCtxCreate = f_ctx_create;
  return Driver::from_table(a, "fake");
}

}  // namespace specprobe::cu
