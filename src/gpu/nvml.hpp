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

// NVML loaded and initialised (dlopen + nvmlInit, some 100 ms on an H200 host): started on its own
// thread while the CUDA driver enumerates the devices (gpu/driver.cpp query_system_gpus), so the
// two overlap. Unusable (no library, init failed) is a valid state: every query answers nullopt.
class Nvml {
 public:
  Nvml();
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;
  bool usable() const { return ready_; }
  // One answer per bus id, in order: nullopt for a device NVML does not know, and for every one
  // when NVML is not usable. Never throws.
  std::vector<std::optional<GpuMemoryInUse>> memory_in_use(const std::vector<std::string>& pci_bus_ids) const;

 private:
  void* lib_ = nullptr;
  void* by_bus_ = nullptr;
  void* memory_ = nullptr;
  void* shutdown_ = nullptr;
  bool ready_ = false;
};

}  // namespace specprobe
