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
using NvmlInit = NvmlReturn (*)();
using NvmlByBus = NvmlReturn (*)(const char*, NvmlDevice*);
using NvmlGetMemory = NvmlReturn (*)(NvmlDevice, NvmlMemory*);

}  // namespace

Nvml::Nvml() {
  lib_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib_) return;
  auto init = reinterpret_cast<NvmlInit>(dlsym(lib_, "nvmlInit_v2"));
  shutdown_ = dlsym(lib_, "nvmlShutdown");
  by_bus_ = dlsym(lib_, "nvmlDeviceGetHandleByPciBusId_v2");
  memory_ = dlsym(lib_, "nvmlDeviceGetMemoryInfo");
  ready_ = init && shutdown_ && by_bus_ && memory_ && init() == 0;
}

Nvml::~Nvml() {
  if (ready_) reinterpret_cast<NvmlInit>(shutdown_)();
  if (lib_) dlclose(lib_);
}

std::vector<std::optional<GpuMemoryInUse>> Nvml::memory_in_use(const std::vector<std::string>& pci_bus_ids) const {
  std::vector<std::optional<GpuMemoryInUse>> out(pci_bus_ids.size());
  if (!ready_) return out;
  const auto by_bus = reinterpret_cast<NvmlByBus>(by_bus_);
  const auto memory = reinterpret_cast<NvmlGetMemory>(memory_);
  for (size_t i = 0; i < pci_bus_ids.size(); ++i) {
    NvmlDevice dev = nullptr;
    NvmlMemory m{};
    if (pci_bus_ids[i].empty() || by_bus(pci_bus_ids[i].c_str(), &dev) != 0 || memory(dev, &m) != 0) continue;
    out[i] = GpuMemoryInUse{static_cast<int64_t>(m.total), static_cast<int64_t>(m.free), static_cast<int64_t>(m.used)};
  }
  return out;
}

}  // namespace specprobe
