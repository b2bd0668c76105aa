// Loads libcuda.so.1 at run time (deviceQueryDrv-style, but through dlopen so one binary runs
// without a driver) and implements the single call wrapper that records failures.
#include "gpu/cuda_api.hpp"

#include <dlfcn.h>

#include <cstring>
#include <utility>

namespace specprobe::cu {

std::string builtin_result_name(CUresult r) {
  switch (r) {
    case 0:
      return "CUDA_SUCCESS";
    case 1:
      return "CUDA_ERROR_INVALID_VALUE";
    case 2:
      return "CUDA_ERROR_OUT_OF_MEMORY";
    case 3:
      return "CUDA_ERROR_NOT_INITIALIZED";
    case 4:
      return "CUDA_ERROR_DEINITIALIZED";
    case 34:
      return "CUDA_ERROR_STUB_LIBRARY";
    case 35:
      return "CUDA_ERROR_INSUFFICIENT_DRIVER";
    case 46:
      return "CUDA_ERROR_DEVICE_UNAVAILABLE";
    case 100:
      return "CUDA_ERROR_NO_DEVICE";
    case 101:
      return "CUDA_ERROR_INVALID_DEVICE";
    case 200:
      return "CUDA_ERROR_INVALID_IMAGE";
    case 201:
      return "CUDA_ERROR_INVALID_CONTEXT";
    case 209:
      return "CUDA_ERROR_NO_BINARY_FOR_GPU";
    case 218:
      return "CUDA_ERROR_INVALID_PTX";
    case 222:
      return "CUDA_ERROR_UNSUPPORTED_PTX_VERSION";
    case 400:
      return "CUDA_ERROR_INVALID_HANDLE";
    case 500:
      return "CUDA_ERROR_NOT_FOUND";
    case 700:
      return "CUDA_ERROR_ILLEGAL_ADDRESS";
    case 701:
      return "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES";
    case 702:
      return "CUDA_ERROR_LAUNCH_TIMEOUT";
    case 715:
      return "CUDA_ERROR_ILLEGAL_INSTRUCTION";
    case 716:
      return "CUDA_ERROR_MISALIGNED_ADDRESS";
    case 719:
      return "CUDA_ERROR_LAUNCH_FAILED";
    case 900:
      return "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED";
    case 999:
      return "CUDA_ERROR_UNKNOWN";
    default:
      return "CUDA_ERROR_" + std::to_string(r);
  }
}

const char* short_site(const char* file) {
  // Keep the path from the last "src/", "probes/" or "tests/" component on.
  const char* best = file;
  for (const char* marker : {"/src/", "/probes/", "/tests/", "/kernels/", "/bench/"}) {
    if (const char* p = std::strstr(file, marker)) {
      if (best == file || p < best) best = p + 1;
    }
  }
  return best;
}

namespace {

template <class F>
bool bind(void* handle, F*& slot, const char* symbol) {
  slot = reinterpret_cast<F*>(dlsym(handle, symbol));
  return slot != nullptr;
}

}  // namespace

Expected<std::shared_ptr<Driver>> Driver::load_system() {
  void* handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    return environment_error(std::string("cannot load libcuda.so.1: ") + (why ? why : "not found"));
  }
  Api a;
  std::string missing;
  auto need = [&](auto*& slot, const char* sym) {
    if (!bind(handle, slot, sym)) missing += (missing.empty() ? "" : ", ") + std::string(sym);
  };
  need(a.cuInit, "cuInit");
  need(a.cuDriverGetVersion, "cuDriverGetVersion");
  need(a.cuGetErrorName, "cuGetErrorName");
  need(a.cuGetErrorString, "cuGetErrorString");
  need(a.cuDeviceGetCount, "cuDeviceGetCount");
  need(a.cuDeviceGet, "cuDeviceGet");
  need(a.cuDeviceGetName, "cuDeviceGetName");
  need(a.cuDeviceGetAttribute, "cuDeviceGetAttribute");
  need(a.cuDeviceTotalMem, "cuDeviceTotalMem_v2");
  need(a.cuDeviceGetUuid, "cuDeviceGetUuid_v2");
  if (!a.cuDeviceGetUuid) bind(handle, a.cuDeviceGetUuid, "cuDeviceGetUuid");
  need(a.cuDeviceGetPCIBusId, "cuDeviceGetPCIBusId");
  need(a.cuCtxCreate, "cuCtxCreate_v2");
  need(a.cuCtxDestroy, "cuCtxDestroy_v2");
  need(a.cuCtxSetCurrent, "cuCtxSetCurrent");
  need(a.cuCtxSynchronize, "cuCtxSynchronize");
  need(a.cuModuleLoadData, "cuModuleLoadData");
  need(a.cuModuleUnload, "cuModuleUnload");
  need(a.cuModuleGetFunction, "cuModuleGetFunction");
  need(a.cuFuncGetAttribute, "cuFuncGetAttribute");
  need(a.cuFuncSetAttribute, "cuFuncSetAttribute");
  need(a.cuOccupancyMaxActiveBlocksPerMultiprocessor, "cuOccupancyMaxActiveBlocksPerMultiprocessor");
  need(a.cuMemAlloc, "cuMemAlloc_v2");
  need(a.cuMemFree, "cuMemFree_v2");
  need(a.cuMemcpyHtoD, "cuMemcpyHtoD_v2");
  need(a.cuMemcpyDtoH, "cuMemcpyDtoH_v2");
  need(a.cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2");
  need(a.cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2");
  need(a.cuMemsetD32, "cuMemsetD32_v2");
  need(a.cuLaunchKernel, "cuLaunchKernel");
  need(a.cuStreamCreate, "cuStreamCreate");
  need(a.cuStreamDestroy, "cuStreamDestroy_v2");
  need(a.cuStreamSynchronize, "cuStreamSynchronize");
  need(a.cuStreamBeginCapture, "cuStreamBeginCapture_v2");
  need(a.cuStreamEndCapture, "cuStreamEndCapture");
  need(a.cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags");
  need(a.cuGraphLaunch, "cuGraphLaunch");
  need(a.cuGraphExecDestroy, "cuGraphExecDestroy");
  need(a.cuGraphDestroy, "cuGraphDestroy");
  need(a.cuEventCreate, "cuEventCreate");
  need(a.cuEventDestroy, "cuEventDestroy_v2");
  need(a.cuEventRecord, "cuEventRecord");
  need(a.cuEventSynchronize, "cuEventSynchronize");
  need(a.cuEventElapsedTime, "cuEventElapsedTime");
  bind(handle, a.cuTensorMapEncodeTiled, "cuTensorMapEncodeTiled");  // optional
  bind(handle, a.cuMemGetInfo, "cuMemGetInfo_v2");                   // optional
  if (!missing.empty()) {
    dlclose(handle);
    return environment_error("libcuda.so.1 lacks " + missing + " (driver too old?)");
  }
  std::string path = "libcuda.so.1";
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(a.cuInit), &info) && info.dli_fname) path = info.dli_fname;
  auto d = from_table(a, path);
  d->handle_ = handle;  // kept open for the process lifetime: contexts may outlive the Driver
  return d;
}

std::shared_ptr<Driver> Driver::from_table(const Api& api, std::string library_path) {
  auto d = std::make_shared<Driver>();
  d->api_ = api;
  d->library_path_ = std::move(library_path);
  return d;
}

std::string Driver::result_name(CUresult r) const {
  const char* s = nullptr;
  if (api_.cuGetErrorName && api_.cuGetErrorName(r, &s) == kSuccess && s) return s;
  return builtin_result_name(r);
}

std::string Driver::result_string(CUresult r) const {
  const char* s = nullptr;
  if (api_.cuGetErrorString && api_.cuGetErrorString(r, &s) == kSuccess && s) return s;
  return "unrecognized error code";
}

Status Driver::check(CUresult result, const char* call, const char* file, int line) {
  if (result == kSuccess) return Ok{};
  DriverCall c;
  c.call = call;
  c.site = std::string(short_site(file)) + ":" + std::to_string(line);
  c.result = result;
  c.result_name = result_name(result);
  c.result_string = result_string(result);
  last_result_ = result;
  Error e = environment_error(fmt::format("{} failed: {} ({}) at {}", c.call, c.result_name, c.result_string, c.site));
  failed_.push_back(std::move(c));
  return e;
}

}  // namespace specprobe::cu
