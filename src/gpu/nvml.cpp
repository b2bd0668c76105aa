// NVML memory query (see nvml.hpp). The four entry points are looked up by name; NVML's types are
// declared here as the documented C ABI (nvml.h is not needed to build).
#include "gpu/nvml.hpp"

#include <dlfcn.h>

namespace specprobe {

namespace {

using NvmlReturn = int;  // nvmlReturn_t; NVML_SUCCESS = 0
using NvmlDevice = void*;
struct NvmlMemory {  // nvmlMemory_t
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

}  // namespace

std::vector<std::optional<GpuMemoryInUse>> query_memory_in_use(const std::vector<std::string>& pci_bus_ids) {
  std::vector<std::optional<GpuMemoryInUse>> out(pci_bus_ids.size());
  if (pci_bus_ids.empty()) return out;
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return out;
  auto init = reinterpret_cast<NvmlReturn (*)()>(dlsym(lib, "nvmlInit_v2"));
  auto shutdown = reinterpret_cast<NvmlReturn (*)()>(dlsym(lib, "nvmlShutdown"));
  auto by_bus =
      reinterpret_cast<NvmlReturn (*)(const char*, NvmlDevice*)>(dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2"));
  auto memory = reinterpret_cast<NvmlReturn (*)(NvmlDevice, NvmlMemory*)>(dlsym(lib, "nvmlDeviceGetMemoryInfo"));
  if (init && shutdown && by_bus && memory && init() == 0) {
    for (size_t i = 0; i < pci_bus_ids.size(); ++i) {
      NvmlDevice dev = nullptr;
      NvmlMemory m{};
      if (pci_bus_ids[i].empty() || by_bus(pci_bus_ids[i].c_str(), &dev) != 0 || memory(dev, &m) != 0) continue;
      out[i] =
          GpuMemoryInUse{static_cast<int64_t>(m.total), static_cast<int64_t>(m.free), static_cast<int64_t>(m.used)};
    }
    shutdown();
  }
  dlclose(lib);
  return out;
}

}  // namespace specprobe
