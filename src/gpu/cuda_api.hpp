// The slice of the CUDA Driver API that specprobe uses, as a table of function pointers filled
// from libcuda.so.1 at run time (dlopen; never linked) or, in tests, from a scripted fake
// (tests/support/cuda_fake.hpp, Driver::from_table).
// Types are declared here, ABI-compatible with cuda.h, so the build needs no CUDA headers.
// Every call goes through SP_CU(cuda, fn(args)), which records the call text, file:line, the
// CUresult name and its string when the call fails. Touches the GPU only through the table.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "gpu/driver.hpp"

namespace specprobe::cu {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUstream = struct CUstream_st*;
using CUevent = struct CUevent_st*;
using CUgraph = struct CUgraph_st*;
using CUgraphExec = struct CUgraphExec_st*;

// CUresult values specprobe names itself (the fake has no cuGetErrorName).
inline constexpr CUresult kSuccess = 0;
inline constexpr CUresult kErrorInvalidValue = 1;
inline constexpr CUresult kErrorOutOfMemory = 2;
inline constexpr CUresult kErrorNotInitialized = 3;
inline constexpr CUresult kErrorNoDevice = 100;
inline constexpr CUresult kErrorInvalidDevice = 101;
inline constexpr CUresult kErrorNoBinaryForGpu = 209;
inline constexpr CUresult kErrorIllegalAddress = 700;
inline constexpr CUresult kErrorLaunchOutOfResources = 701;
inline constexpr CUresult kErrorLaunchFailed = 719;
inline constexpr CUresult kErrorNotFound = 500;
inline constexpr CUresult kErrorUnknown = 999;

// Device attributes (CUdevice_attribute).
inline constexpr int kAttrMultiprocessorCount = 16;
inline constexpr int kAttrPciBusId = 33;
inline constexpr int kAttrPciDeviceId = 34;
inline constexpr int kAttrMemoryClockRate = 36;       // kHz
inline constexpr int kAttrGlobalMemoryBusWidth = 37;  // bits
inline constexpr int kAttrL2CacheSize = 38;
inline constexpr int kAttrMaxThreadsPerMultiprocessor = 39;
inline constexpr int kAttrPciDomainId = 50;
inline constexpr int kAttrComputeCapabilityMajor = 75;
inline constexpr int kAttrComputeCapabilityMinor = 76;
inline constexpr int kAttrMaxSharedMemoryPerMultiprocessor = 81;
inline constexpr int kAttrMaxRegistersPerMultiprocessor = 82;
inline constexpr int kAttrMaxSharedMemoryPerBlockOptin = 97;

// Function attributes (CUfunction_attribute).
inline constexpr int kFuncMaxThreadsPerBlock = 0;
inline constexpr int kFuncSharedSizeBytes = 1;
inline constexpr int kFuncLocalSizeBytes = 3;
inline constexpr int kFuncNumRegs = 4;
inline constexpr int kFuncBinaryVersion = 6;
inline constexpr int kFuncMaxDynamicSharedSizeBytes = 8;

inline constexpr unsigned kStreamNonBlocking = 1;
inline constexpr int kStreamCaptureModeThreadLocal = 1;

// The table. Names are the exported (versioned) symbols, so dlsym finds the ABI we declare.
struct Api {
  CUresult (*cuInit)(unsigned) = nullptr;
  CUresult (*cuDriverGetVersion)(int*) = nullptr;
  CUresult (*cuGetErrorName)(CUresult, const char**) = nullptr;
  CUresult (*cuGetErrorString)(CUresult, const char**) = nullptr;
  CUresult (*cuDeviceGetCount)(int*) = nullptr;
  CUresult (*cuDeviceGet)(CUdevice*, int) = nullptr;
  CUresult (*cuDeviceGetName)(char*, int, CUdevice) = nullptr;
  CUresult (*cuDeviceGetAttribute)(int*, int, CUdevice) = nullptr;
  CUresult (*cuDeviceTotalMem)(size_t*, CUdevice) = nullptr;        // _v2
  CUresult (*cuDeviceGetUuid)(unsigned char*, CUdevice) = nullptr;  // _v2, 16 bytes
  CUresult (*cuDeviceGetPCIBusId)(char*, int, CUdevice) = nullptr;
  CUresult (*cuCtxCreate)(CUcontext*, unsigned, CUdevice) = nullptr;  // _v2
  CUresult (*cuCtxDestroy)(CUcontext) = nullptr;                      // _v2
  CUresult (*cuCtxSetCurrent)(CUcontext) = nullptr;
  CUresult (*cuCtxSynchronize)() = nullptr;
  CUresult (*cuModuleLoadData)(CUmodule*, const void*) = nullptr;
  CUresult (*cuModuleUnload)(CUmodule) = nullptr;
  CUresult (*cuModuleGetFunction)(CUfunction*, CUmodule, const char*) = nullptr;
  CUresult (*cuFuncGetAttribute)(int*, int, CUfunction) = nullptr;
  CUresult (*cuFuncSetAttribute)(CUfunction, int, int) = nullptr;
  CUresult (*cuOccupancyMaxActiveBlocksPerMultiprocessor)(int*, CUfunction, int, size_t) = nullptr;
  CUresult (*cuMemAlloc)(CUdeviceptr*, size_t) = nullptr;                               // _v2
  CUresult (*cuMemFree)(CUdeviceptr) = nullptr;                                         // _v2
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void*, size_t) = nullptr;                 // _v2
  CUresult (*cuMemcpyDtoH)(void*, CUdeviceptr, size_t) = nullptr;                       // _v2
  CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr, const void*, size_t, CUstream) = nullptr;  // _v2
  CUresult (*cuMemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream) = nullptr;  // _v2
  CUresult (*cuMemsetD32)(CUdeviceptr, unsigned, size_t) = nullptr;                     // _v2
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                             void**, void**) = nullptr;
  CUresult (*cuStreamCreate)(CUstream*, unsigned) = nullptr;
  CUresult (*cuStreamDestroy)(CUstream) = nullptr;  // _v2
  CUresult (*cuStreamSynchronize)(CUstream) = nullptr;
  CUresult (*cuStreamBeginCapture)(CUstream, int) = nullptr;  // _v2
  CUresult (*cuStreamEndCapture)(CUstream, CUgraph*) = nullptr;
  CUresult (*cuGraphInstantiateWithFlags)(CUgraphExec*, CUgraph, unsigned long long) = nullptr;
  CUresult (*cuGraphLaunch)(CUgraphExec, CUstream) = nullptr;
  CUresult (*cuGraphExecDestroy)(CUgraphExec) = nullptr;
  CUresult (*cuGraphDestroy)(CUgraph) = nullptr;
  CUresult (*cuEventCreate)(CUevent*, unsigned) = nullptr;
  CUresult (*cuEventDestroy)(CUevent) = nullptr;  // _v2
  CUresult (*cuEventRecord)(CUevent, CUstream) = nullptr;
  CUresult (*cuEventSynchronize)(CUevent) = nullptr;
  CUresult (*cuEventElapsedTime)(float*, CUevent, CUevent) = nullptr;
  // Optional (nullptr when absent, and in the fake): free and total bytes of the current
  // context's device. Probes check their footprint against it before allocating.
  CUresult (*cuMemGetInfo)(size_t* free_bytes, size_t* total_bytes) = nullptr;  // _v2
  // Optional (CUDA 12+ drivers; nullptr when absent, and in the fake): fills a 128-byte
  // CUtensorMap for the copy engine. Kernels that need one fall back when it is missing.
  CUresult (*cuTensorMapEncodeTiled)(void* tensor_map, int data_type, unsigned rank, void* global_address,
                                     const uint64_t* global_dim, const uint64_t* global_strides,
                                     const unsigned* box_dim, const unsigned* element_strides, int interleave,
                                     int swizzle, int l2_promotion, int oob_fill) = nullptr;
};

// CUtensorMap enums (cuda.h) used by the probes.
inline constexpr int kTensorMapDataTypeUint8 = 0;
inline constexpr int kTensorMapSwizzle64B = 2;
inline constexpr int kTensorMapSwizzle128B = 3;
inline constexpr int kTensorMapL2Promotion256B = 3;

// "CUDA_ERROR_ILLEGAL_ADDRESS" for the values specprobe knows, "CUDA_ERROR_<n>" otherwise.
std::string builtin_result_name(CUresult r);

// A loaded API plus the log of failed calls. Thread-compatible (one thread at a time).
class Driver {
 public:
  // dlopen("libcuda.so.1") and resolve the table. Error (environment) when the library or a
  // required symbol is missing; does not call cuInit.
  static Expected<std::shared_ptr<Driver>> load_system();
  // A driver over a ready table (the fake, or tests).
  static std::shared_ptr<Driver> from_table(const Api& api, std::string library_path);

  const Api& api() const { return api_; }
  const std::string& library_path() const { return library_path_; }

  // The one call wrapper: returns Ok for CUDA_SUCCESS; otherwise records a DriverCall and
  // returns an environment Error "cuX(...) failed: CUDA_ERROR_Y (string) at file:line".
  Status check(CUresult result, const char* call, const char* file, int line);

  std::string result_name(CUresult r) const;
  std::string result_string(CUresult r) const;

  const std::vector<DriverCall>& failed_calls() const { return failed_; }
  // The CUresult of the most recent failed call (0 when none).
  CUresult last_result() const { return last_result_; }

 private:
  Api api_;
  std::string library_path_;
  void* handle_ = nullptr;
  std::vector<DriverCall> failed_;
  CUresult last_result_ = 0;
};

// Strips the repository prefix from __FILE__ so recorded sites read "src/gpu/driver.cpp:12".
const char* short_site(const char* file);

}  // namespace specprobe::cu

// One Driver API call through the wrapper: SP_CU(drv, cuDeviceGetCount(&n)) -> Status.
#define SP_CU(drv, expr) ((drv).check((drv).api().expr, #expr, __FILE__, __LINE__))
// Returns the Error from the enclosing function (its return type must accept an Error).
#define SP_CU_TRY(drv, expr)                          \
  do {                                                \
    auto sp_cu_status_ = SP_CU(drv, expr);            \
    if (!sp_cu_status_) return sp_cu_status_.error(); \
  } while (0)
