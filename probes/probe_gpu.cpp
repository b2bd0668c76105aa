// GPU-side result helpers shared by the probes (see probe_gpu.hpp).
#include "probes/probe_gpu.hpp"

#include <algorithm>

#include "gpu/cuda_session.hpp"
#include "probes/probe_common.hpp"

namespace specprobe::probes {

Json cuda_failure(GpuSession& s, const Json& spec, const Error& e) {
  Json r = make_result(spec, kError, e.message);
  const auto code = s.driver().last_result();
  if (code == 2) {  // CUDA_ERROR_OUT_OF_MEMORY: another process holds the memory
    r["reason"] = fmt::format(
        "GPU busy: {} MiB free ({}); run specprobe before the server starts, or pass --probes "
        "off to accept the rules' answer",
        s.device_free_bytes() >> 20, e.message);
    r["gpu_busy"] = true;
  }
  if (code != 0) {
    r["cuda_error"] = s.driver().result_name(code);
    if (code == 700 || code == 715 || code == 716 || code == 719) r["status"] = kCrash;
  }
  return r;
}

Json session_failure(const Json& spec, const Error& e) {
  if (e.message.find("CUDA_ERROR_OUT_OF_MEMORY") == std::string::npos) return make_result(spec, kError, e.message);
  Json r = make_result(spec, kError,
                       fmt::format("GPU busy: no device memory left for the probe's CUDA context ({}); run specprobe "
                                   "before the server starts, or pass --probes off to accept the rules' answer",
                                   e.message));
  r["gpu_busy"] = true;
  r["cuda_error"] = "CUDA_ERROR_OUT_OF_MEMORY";
  return r;
}

Expected<unsigned long long> upload_buffer(GpuSession& s, const void* data, size_t bytes) {
  auto d = s.alloc(std::max<size_t>(bytes, 16));
  if (!d) return d.error();
  if (data && bytes > 0)
    if (auto st = s.upload(*d, data, bytes); !st) return st.error();
  return *d;
}

Status poison_bf16(GpuSession& s, unsigned long long ptr, size_t elems) {
  return s.fill32(ptr, (uint32_t{kPoisonBf16} << 16) | kPoisonBf16, (elems + 1) / 2);
}

Status launch_and_download(GpuSession& s, const std::function<Status()>& launch, unsigned long long out,
                           std::vector<uint16_t>& host) {
  if (auto st = launch(); !st) return st;
  if (auto st = s.sync(); !st) return st;
  return s.download(host.data(), out, host.size() * 2);
}

Json smem_skip(GpuSession& s, const Json& spec, unsigned smem) {
  if (static_cast<int64_t>(smem) <= s.gpu().smem_per_block_optin) return nullptr;
  return make_result(spec, kSkip,
                     fmt::format("needs {} KB shared memory per block, device allows {} KB", (smem + 1023) / 1024,
                                 s.gpu().smem_per_block_optin / 1024));
}

Json device_memory_skip(GpuSession& s, const Json& spec, uint64_t need) {
  const uint64_t free = s.device_free_bytes();
  const std::string why = memory_problem(need, free, "device memory", "the device has free");
  if (why.empty()) return nullptr;
  // Larger than the whole GPU: this shape cannot be probed here (a skip, the rules decide). Fits
  // the GPU but not what is free: another process holds the memory (a serving engine), so the
  // probe's evidence is missing, not absent by design (an error: the plan is unknown, issue 39).
  const auto total = static_cast<uint64_t>(std::max<int64_t>(0, s.gpu().memory_bytes));
  if (total != 0 && need > total) return make_result(spec, kSkip, why);
  Json r =
      make_result(spec, kError,
                  fmt::format("GPU busy: {} MiB free, the probe needs {} MiB ({}); run specprobe before the server "
                              "starts, or pass --probes off to accept the rules' answer",
                              free >> 20, (need + (1 << 20) - 1) >> 20, why));
  r["gpu_busy"] = true;
  return r;
}

}  // namespace specprobe::probes
