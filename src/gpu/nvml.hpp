// What the GPUs' memory holds right now, from NVML (libnvidia-ml.so.1, which the driver installs,
// loaded at run time like libcuda): total, free and used bytes per device, found by PCI bus id,
// without creating a CUDA context (a context would itself take memory on the GPU, and time).
// vLLM's V1 worker refuses to start when the memory free at its start is less than
// gpu_memory_utilization x total (facts/derive_memory.cpp, SP5009): memory other processes hold
// is what a pre-flight check on the GPU host can see and a declared GPU cannot.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace specprobe {

struct GpuMemoryInUse {
  int64_t total = 0;
  int64_t free = 0;
  int64_t used = 0;
};

// One answer per bus id, in order: nullopt for a device NVML does not know, and for every one
// when NVML cannot be loaded or initialised (no driver, a container without it). Never throws.
std::vector<std::optional<GpuMemoryInUse>> query_memory_in_use(const std::vector<std::string>& pci_bus_ids);

}  // namespace specprobe
