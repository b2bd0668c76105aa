// One probe's GPU session: a fresh context on one device, a kernel image (the probes' embedded
// fatbin, probes/probe_common.hpp) loaded into it, device allocations, launches, event timing and per-kernel resource
// evidence. Every Driver API call goes through SP_CU. Touches the GPU; errors are values (Expected).
#pragma once
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/json.hpp"
#include "gpu/cuda_api.hpp"
#include "gpu/gpu_info.hpp"

namespace specprobe {

struct LaunchShape {
  unsigned grid_x = 1, grid_y = 1, grid_z = 1;
  unsigned block = 128;
  unsigned smem = 0;  // dynamic shared memory bytes
};

class GpuSession {
 public:
  // Loads the driver, creates a context on `ordinal` and loads IMAGE (a fatbin) into it. The
  // context and the first image's module are kept for later sessions of the same process (a probe
  // child runs several probes) unless the context was left unusable; a session with another image
  // loads its own module into the kept context. Each session has its own stream, and its
  // allocations are freed when it ends. An empty IMAGE is an environment error.
  static Expected<std::unique_ptr<GpuSession>> open(std::span<const unsigned char> image, int ordinal = 0);
  ~GpuSession();
  GpuSession(const GpuSession&) = delete;
  GpuSession& operator=(const GpuSession&) = delete;

  cu::Driver& driver() { return *drv_; }
  const GpuInfo& gpu() const { return gpu_; }
  cu::CUstream stream() const { return stream_; }

  Expected<cu::CUfunction> function(const std::string& name);
  Expected<cu::CUdeviceptr> alloc(size_t bytes);  // freed when the session ends
  // Free device memory now (cuMemGetInfo); the device's total memory where the driver lacks it.
  uint64_t device_free_bytes();
  Status upload(cu::CUdeviceptr dst, const void* src, size_t bytes);
  Status download(void* dst, cu::CUdeviceptr src, size_t bytes);
  Status fill32(cu::CUdeviceptr dst, uint32_t value, size_t count);
  // Launches on the session stream (raises the dynamic smem limit first when needed).
  Status launch(cu::CUfunction f, const LaunchShape& s, void* params);
  Status sync();
  // Median milliseconds of `reps` timed runs of body after `warmup` untimed ones (CUDA events).
  Expected<double> time_median_ms(const std::function<Status()>& body, int warmup, int reps);
  // Device-to-device copy ceiling in bytes/s (read + written), median of a few copies.
  Expected<double> copy_ceiling_bytes_per_s(size_t bytes);
  // {"kernel", "registers", "local_bytes", "static_smem_bytes", "dynamic_smem_bytes",
  //  "threads_per_block", "occupancy_blocks_per_sm", "binary_version"}.
  Json kernel_evidence(cu::CUfunction f, const std::string& name, const LaunchShape& s);

 private:
  GpuSession() = default;
  // Raises f's dynamic shared-memory limit to `smem` bytes. Done for every launch with dynamic
  // shared memory, not only above 48 KB: a kernel's static bytes count towards 48 KB too.
  Status allow_dynamic_smem(cu::CUfunction f, unsigned smem);
  std::shared_ptr<cu::Driver> drv_;
  GpuInfo gpu_;
  cu::CUcontext ctx_ = nullptr;
  cu::CUmodule module_ = nullptr;
  cu::CUstream stream_ = nullptr;
  std::vector<cu::CUdeviceptr> allocs_;
};

}  // namespace specprobe
