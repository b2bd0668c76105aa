// `specprobe gpu`'s query (deviceQueryDrv's fields) over the Driver API loaded at run time.
#include "gpu/driver.hpp"

#include "gpu/nvml.hpp"

#include <array>
#include <cstdlib>
#include <cstring>
#include <future>
#include <memory>

#include "common/excerpt.hpp"
#include "common/hash.hpp"

#include "gpu/cuda_api.hpp"

namespace specprobe {

std::string hash_uuid(const unsigned char (&uuid)[16]) {
  return fmt::format("fnv1a64:{:016x}", fnv1a64(std::string_view(reinterpret_cast<const char*>(uuid), sizeof uuid)));
}

DriverReport query_gpus(cu::Driver& drv) {
  DriverReport rep;
  rep.library_path = drv.library_path();
  auto finish = [&](Error e) {
    rep.problem = std::move(e);
    rep.failed_calls = drv.failed_calls();
    return rep;
  };
  if (auto s = SP_CU(drv, cuInit(0)); !s) return finish(s.error());
  rep.loaded = true;
  if (auto s = SP_CU(drv, cuDriverGetVersion(&rep.driver_version)); !s) return finish(s.error());
  int count = 0;
  if (auto s = SP_CU(drv, cuDeviceGetCount(&count)); !s) return finish(s.error());
  if (count == 0) return finish(environment_error("the driver sees no CUDA device"));
  for (int i = 0; i < count; ++i) {
    cu::CUdevice dev = 0;
    if (!SP_CU(drv, cuDeviceGet(&dev, i))) continue;
    GpuInfo g;
    g.ordinal = i;
    g.source = "driver";
    std::array<char, 256> name{};
    if (SP_CU(drv, cuDeviceGetName(name.data(), static_cast<int>(name.size()), dev))) g.name = name.data();
    auto attr = [&](int a, const char* text) -> int {
      int v = 0;
      Status s = drv.check(drv.api().cuDeviceGetAttribute(&v, a, dev), text, __FILE__, __LINE__);
      return s ? v : 0;
    };
#define SP_ATTR(x) attr(cu::x, "cuDeviceGetAttribute(&v, " #x ", dev)")
    g.cc_major = SP_ATTR(kAttrComputeCapabilityMajor);
    g.cc_minor = SP_ATTR(kAttrComputeCapabilityMinor);
    g.sm_count = SP_ATTR(kAttrMultiprocessorCount);
    g.smem_per_block_optin = SP_ATTR(kAttrMaxSharedMemoryPerBlockOptin);
    g.smem_per_sm = SP_ATTR(kAttrMaxSharedMemoryPerMultiprocessor);
    g.l2_bytes = SP_ATTR(kAttrL2CacheSize);
    g.max_threads_per_sm = SP_ATTR(kAttrMaxThreadsPerMultiprocessor);
    g.regs_per_sm = SP_ATTR(kAttrMaxRegistersPerMultiprocessor);
    // Peak DRAM bandwidth from clocks: kHz * 1000 * bus bytes * 2 (double data rate).
    int64_t clock_khz = SP_ATTR(kAttrMemoryClockRate);
    int64_t bus_bits = SP_ATTR(kAttrGlobalMemoryBusWidth);
#undef SP_ATTR
    g.memory_bandwidth_bytes_per_s = clock_khz * 1000 * (bus_bits / 8) * 2;
    size_t mem = 0;
    if (SP_CU(drv, cuDeviceTotalMem(&mem, dev))) g.memory_bytes = static_cast<int64_t>(mem);
    unsigned char uuid[16] = {};
    if (SP_CU(drv, cuDeviceGetUuid(uuid, dev))) g.uuid_hash = hash_uuid(uuid);
    std::array<char, 64> bus{};
    if (SP_CU(drv, cuDeviceGetPCIBusId(bus.data(), static_cast<int>(bus.size()), dev))) g.pci_bus_id = bus.data();
    rep.gpus.push_back(std::move(g));
  }
  rep.failed_calls = drv.failed_calls();
  return rep;
}

DriverReport query_system_gpus() {
  // NVML starts on its own thread meanwhile: its load and init overlap the driver's (gpu/nvml.hpp).
  auto nvml = std::async(std::launch::async, [] { return std::make_unique<Nvml>(); });
  auto drv = cu::Driver::load_system();
  if (!drv) {
    DriverReport rep;
    rep.problem = drv.error();
    return rep;
  }
  DriverReport rep = query_gpus(**drv);
  // What the memory holds now, for each GPU found (nothing when NVML is missing).
  std::vector<std::string> buses;
  for (const auto& g : rep.gpus) buses.push_back(g.pci_bus_id);
  const auto in_use = nvml.get()->memory_in_use(buses);
  for (size_t i = 0; i < rep.gpus.size(); ++i)
    if (in_use[i]) {
      rep.gpus[i].memory_free_bytes = in_use[i]->free;
      rep.gpus[i].memory_used_bytes = in_use[i]->used;
    }
  return rep;
}

std::optional<Error> driver_without_device(const DriverReport& r) {
  if (r.library_path.empty() || !r.gpus.empty()) return std::nullopt;
  // CUDA_ERROR_STUB_LIBRARY: the toolkit's link-time stub answers in place of a driver; no driver.
  constexpr int kErrorStubLibrary = 34;
  for (const auto& c : r.failed_calls)
    if (c.result == kErrorStubLibrary) return std::nullopt;
  auto env = [](const char* name) {
    const char* v = std::getenv(name);
    return v ? fmt::format("{}=\"{}\"", name, excerpt(v)) : fmt::format("{} unset", name);
  };
  return environment_error(
      fmt::format("the CUDA driver loaded ({}) but shows no usable GPU: {} ({}, {}). A container started without "
                  "GPUs (docker run --gpus, the NVIDIA container runtime, a Kubernetes nvidia.com/gpu limit) or a "
                  "CUDA_VISIBLE_DEVICES that names no device hides them: make the GPU visible, or pass --gpu NAME "
                  "(e.g. H100, B200, sm_90) to evaluate for a declared GPU",
                  r.library_path, r.problem ? r.problem->message : "no device", env("CUDA_VISIBLE_DEVICES"),
                  env("NVIDIA_VISIBLE_DEVICES")));
}

Json driver_report_json(const DriverReport& r) {
  Json j;
  j["loaded"] = r.loaded;
  j["library_path"] = r.library_path;
  j["driver_version"] = r.driver_version;
  j["gpus"] = Json::array();
  for (const auto& g : r.gpus) {
    j["gpus"].push_back({{"ordinal", g.ordinal},
                         {"name", g.name},
                         {"cc", fmt::format("{}.{}", g.cc_major, g.cc_minor)},
                         {"sm_count", g.sm_count},
                         {"smem_optin_bytes", g.smem_per_block_optin},
                         {"smem_per_sm_bytes", g.smem_per_sm},
                         {"l2_bytes", g.l2_bytes},
                         {"memory_bytes", g.memory_bytes},
                         {"memory_bandwidth_bytes_per_s", g.memory_bandwidth_bytes_per_s},
                         {"max_threads_per_sm", g.max_threads_per_sm},
                         {"regs_per_sm", g.regs_per_sm},
                         {"uuid_hash", g.uuid_hash},
                         {"pci_bus_id", g.pci_bus_id},
                         {"memory_free_bytes", g.memory_free_bytes >= 0 ? Json(g.memory_free_bytes) : Json(nullptr)},
                         {"memory_used_bytes", g.memory_used_bytes >= 0 ? Json(g.memory_used_bytes) : Json(nullptr)},
                         {"source", g.source}});
  }
  j["problem"] = r.problem ? Json(r.problem->message) : Json(nullptr);
  j["failed_calls"] = Json::array();
  for (const auto& c : r.failed_calls)
    j["failed_calls"].push_back({{"call", c.call},
                                 {"site", c.site},
                                 {"result", c.result},
                                 {"result_name", c.result_name},
                                 {"result_string", c.result_string}});
  return j;
}

}  // namespace specprobe
