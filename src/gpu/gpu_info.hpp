// What specprobe knows about a GPU: read through the Driver API (source "driver") or taken from
// the built-in table of known GPUs when the user declares one with --gpu (source "declared").
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/json.hpp"

namespace specprobe {

struct GpuInfo {
  int ordinal = -1;
  std::string name;  // "NVIDIA H200", "NVIDIA GB10"
  int cc_major = 0;
  int cc_minor = 0;
  int sm_count = 0;
  int64_t smem_per_block_optin = 0;  // bytes a block may opt in to (cudaDevAttrMaxSharedMemoryPerBlockOptin)
  int64_t smem_per_sm = 0;
  int64_t l2_bytes = 0;
  int64_t memory_bytes = 0;
  // Free and used now (NVML, gpu/nvml.hpp), for a GPU queried on this machine; -1 unknown (a
  // declared GPU, no NVML).
  int64_t memory_free_bytes = -1;
  int64_t memory_used_bytes = -1;
  int64_t memory_bandwidth_bytes_per_s = 0;  // datasheet for declared GPUs; derived from clocks for real ones
  int max_threads_per_sm = 0;
  int regs_per_sm = 0;
  std::string uuid_hash;  // hashed, never the raw UUID
  std::string pci_bus_id;
  std::string source;             // "driver" | "declared"
  std::string vendor = "nvidia";  // "nvidia" | "amd"
  std::string arch;               // AMD: the gfx target ("gfx942"); NVIDIA: empty (cc_major/minor say it)

  int sm() const { return cc_major * 10 + cc_minor; }  // 90, 100, 121 (0 for AMD)
  // "sm90", "sm100" (10.x datacenter), "sm12x" (12.x), "sm8x", "sm7x"; AMD: "gfx9" (CDNA:
  // MI200/MI300/MI350), "gfx11" / "gfx12" (RDNA3/4 Radeon)
  std::string arch_family() const;
};

// Facts for one GPU under "gpu.": name, vendor, sm, cc_major, cc_minor, arch_family, arch (AMD),
// sm_count, smem_optin_bytes, smem_per_sm_bytes, l2_bytes, memory_bytes,
// memory_bandwidth_bytes_per_s, source. An AMD GPU has no CUDA compute capability: sm, cc,
// cc_major and cc_minor are null.
Json gpu_facts(const GpuInfo& gpu);

// The built-in table for offline evaluation (CI has no GPU). Accepts product names and aliases
// ("H100", "h100-sxm", "H200", "B200", "GB10", "RTX5090", "A100", "L4", "MI300X", "MI355X"),
// bare NVIDIA archs ("sm_90", "sm90", "sm_121", "9.0") and AMD gfx targets ("gfx942");
// case-insensitive.
Expected<GpuInfo> declared_gpu(const std::string& name);

// gpu_facts of the declared GPU NAME, with gpu.declared = NAME (what `--gpu NAME` evaluates).
Expected<Json> declared_gpu_facts(const std::string& name);

// "sm_90" / "sm_121" (NVIDIA) or "gfx942" (AMD) from gpu.* facts; "?" when unknown.
std::string gpu_arch_label(const Json& facts);

// The table's GPU (a name declared_gpu accepts) that a deployment's GPU product label names:
// Kubernetes nvidia.com/gpu.product values (NVIDIA-H100-80GB-HBM3, NVIDIA-A100-SXM4-80GB,
// Tesla-T4), GKE accelerators (nvidia-h100-80gb, nvidia-tesla-a100, nvidia-l4), AMD product names
// (AMD_Instinct_MI300X_OAM). The longest alias the label starts with, after the vendor words,
// not followed by a digit; nullopt when none.
std::optional<std::string> gpu_name_from_label(std::string_view label);

// Names accepted by declared_gpu, for help text and "did you mean".
std::vector<std::string> known_gpu_names();

}  // namespace specprobe
