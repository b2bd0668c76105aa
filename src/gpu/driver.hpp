// The CUDA Driver API behind an interface. The system implementation loads libcuda.so.1 with
// dlopen at run time (never linked), so one binary runs with and without a GPU; a fake with
// scripted results lets CI (no GPU) cover the logic. Every call goes through one wrapper that
// records the call text, file:line, the CUresult name and its string.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "gpu/gpu_info.hpp"

namespace specprobe {

// One recorded Driver API call that failed (or, with tracing on, every call).
struct DriverCall {
  std::string call;           // "cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_..., 0)"
  std::string site;           // "src/gpu/driver.cpp:123"
  int result = 0;             // CUresult
  std::string result_name;    // "CUDA_ERROR_NO_DEVICE"
  std::string result_string;  // driver's description
};

// What `specprobe gpu` and `check --gpu auto` get from the driver.
struct DriverReport {
  bool loaded = false;       // libcuda.so.1 was found and cuInit succeeded
  std::string library_path;  // the libcuda actually loaded (dladdr on cuInit)
  int driver_version = 0;    // cuDriverGetVersion, e.g. 13000
  std::vector<GpuInfo> gpus;
  std::optional<Error> problem;  // why there is no GPU (no library, cuInit failed, no device)
  std::vector<DriverCall> failed_calls;
};

// A driver library that loaded (not the CUDA toolkit's stub) but shows no usable device: the
// GPUs are hidden from this process (a container started without them, CUDA_VISIBLE_DEVICES naming
// none) or the driver cannot start. Evaluating a declared GPU instead would answer for some other
// machine, so this is an environment error naming CUDA_VISIBLE_DEVICES / NVIDIA_VISIBLE_DEVICES and
// their values. Empty where no driver library exists (the declared fallback applies) or a GPU is
// visible.
std::optional<Error> driver_without_device(const DriverReport& r);

// Queries every visible device. Never throws; a missing driver or device is a DriverReport with
// `problem` set, not an error return.
DriverReport query_system_gpus();

namespace cu {
class Driver;
}
// The same query over any loaded driver (the system one, or the fake in tests). Calls cuInit.
DriverReport query_gpus(cu::Driver& drv);

// The report as JSON (for `specprobe gpu --format json` and probe evidence):
// {"loaded", "library_path", "driver_version", "gpus": [...], "problem", "failed_calls": [...]}.
Json driver_report_json(const DriverReport& report);

// "fnv1a64:0123456789abcdef": the UUID hashed so reports never carry the raw identifier.
std::string hash_uuid(const unsigned char (&uuid)[16]);

}  // namespace specprobe
