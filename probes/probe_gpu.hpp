// GPU-side pieces every probe shares once its session is open: the result for a failed Driver
// API call and the skips for a launch or buffers the device cannot hold. They read the session
// (last CUresult, device limits, free memory) and launch nothing.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "common/error.hpp"
#include "common/json.hpp"

namespace specprobe {
class GpuSession;
}

namespace specprobe::probes {

// An `error` result with the call's message and, where the driver recorded one, its CUresult
// name as "cuda_error"; `crash` for the codes after which the context is unusable (illegal
// address, illegal instruction, misaligned address, launch failure: the kernel faulted).
Json cuda_failure(GpuSession& s, const Json& spec, const Error& e);
// Launches through `launch`, waits for the stream, and downloads host.size() bf16 values from
// `out`; the first failure's error.
Status launch_and_download(GpuSession& s, const std::function<Status()>& launch, unsigned long long out,
                           std::vector<uint16_t>& host);

// A `skip` naming both figures when a block needs more dynamic shared memory than the device
// allows per block; null when it fits.
Json smem_skip(GpuSession& s, const Json& spec, unsigned smem);
// A device buffer of `bytes` (at least 16), holding `data` when it is given.
Expected<unsigned long long> upload_buffer(GpuSession& s, const void* data, size_t bytes);
// Fills the first `elems` bf16 values of a buffer with kPoisonBf16 in whole 32-bit words (two
// values each: the buffer must hold ceil(elems / 2) words).
Status poison_bf16(GpuSession& s, unsigned long long ptr, size_t elems);

// The record of a probe whose GPU session could not be opened (cuInit, cuCtxCreate): an error;
// when the context could not get memory (CUDA_ERROR_OUT_OF_MEMORY: another process holds the
// GPU), a "GPU busy" error with "gpu_busy": true and the fix, as device_memory_skip gives.
Json session_failure(const Json& spec, const Error& e);

// Null when the probe's device buffers (`need` bytes) fit the free device memory. Otherwise a
// `skip` when they exceed the whole GPU (this shape cannot be probed here), or an `error` with
// "gpu_busy": true when another process holds the memory ("GPU busy: N MiB free, the probe
// needs M MiB ..."): the probe's evidence is missing, and the plan is unknown (rules/plan_path).
// Made before the first allocation.
Json device_memory_skip(GpuSession& s, const Json& spec, uint64_t need);

}  // namespace specprobe::probes
