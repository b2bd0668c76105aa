// GPU-side result helpers shared by the probes (see probe_gpu.hpp).
#include "probes/probe_gpu.hpp"

#include <algorithm>

#include "gpu/cuda_session.hpp"
#include "probes/probe_common.hpp"

namespace specprobe::probes {

Json cuda_failure(GpuSession& s, const Json& spec, const Error& e) {
  Json r = make_result(spec, kError, e.message);
  const auto code = s.driver().last_result();
  if (code != 0) {
    r["cuda_error"] = s.driver().result_name(code);
    if (code == 700 || code == 715 || code == 716 || code == 719) r["status"] = kCrash;
  }
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
  return make_result(spec, kSkip, fmt::format("needs {} KB shared memory per block, device allows {} KB",
                                              (smem + 1023) / 1024, s.gpu().smem_per_block_optin / 1024));
}

Json device_memory_skip(GpuSession& s, const Json& spec, uint64_t need) {
  if (auto why = memory_problem(need, s.device_free_bytes(), "device memory", "the device has free"); !why.empty())
    return make_result(spec, kSkip, why);
  return nullptr;
}

}  // namespace specprobe::probes
