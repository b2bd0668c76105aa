// GpuSession: context, module, memory, launches and timing for one probe (see cuda_session.hpp).
#include "gpu/cuda_session.hpp"

#include <algorithm>

namespace specprobe {

namespace {

// One context + loaded module per process, kept across sessions: a probe child runs several probes,
// and creating a context costs ~0.1 s on an H100/H200 (docs/perf/kernels.md#time-to-verdict), more
// than a tiny probe itself. Dropped after any error that leaves the context unusable.
struct ProcessContext {
  std::shared_ptr<cu::Driver> drv;
  GpuInfo gpu;
  cu::CUcontext ctx = nullptr;
  cu::CUmodule module = nullptr;
  const unsigned char* image = nullptr;  // the image MODULE was loaded from
  int ordinal = -1;
};
ProcessContext& process_context() {
  static ProcessContext pc;
  return pc;
}

}  // namespace

Expected<std::unique_ptr<GpuSession>> GpuSession::open(std::span<const unsigned char> fat, int ordinal) {
  if (fat.empty()) return environment_error("no kernel image to load");
  ProcessContext& pc = process_context();
  std::unique_ptr<GpuSession> s(new GpuSession());
  if (pc.ctx && pc.ordinal == ordinal) {
    s->drv_ = pc.drv;
    s->gpu_ = pc.gpu;
    cu::Driver& d = *s->drv_;
    SP_CU_TRY(d, cuCtxSetCurrent(pc.ctx));
    s->ctx_ = pc.ctx;
    if (pc.image == fat.data())
      s->module_ = pc.module;
    else
      SP_CU_TRY(d, cuModuleLoadData(&s->module_, fat.data()));
    SP_CU_TRY(d, cuStreamCreate(&s->stream_, cu::kStreamNonBlocking));
    return s;
  }
  auto drv = cu::Driver::load_system();
  if (!drv) return drv.error();
  DriverReport rep = query_gpus(**drv);
  if (rep.problem) return *rep.problem;
  if (ordinal < 0 || ordinal >= static_cast<int>(rep.gpus.size()))
    return environment_error(fmt::format("no GPU with ordinal {}", ordinal));
  s->drv_ = *drv;
  s->gpu_ = rep.gpus[static_cast<size_t>(ordinal)];
  cu::Driver& d = *s->drv_;
  cu::CUdevice dev = 0;
  SP_CU_TRY(d, cuDeviceGet(&dev, ordinal));
  SP_CU_TRY(d, cuCtxCreate(&s->ctx_, 0, dev));
  SP_CU_TRY(d, cuStreamCreate(&s->stream_, cu::kStreamNonBlocking));
  SP_CU_TRY(d, cuModuleLoadData(&s->module_, fat.data()));
  if (!pc.ctx) {
    pc.drv = s->drv_;
    pc.gpu = s->gpu_;
    pc.ctx = s->ctx_;
    pc.module = s->module_;
    pc.image = fat.data();
    pc.ordinal = ordinal;
  }
  return s;
}

GpuSession::~GpuSession() {
  if (!drv_) return;
  // Best effort: after a sticky error these fail too; the failures are recorded, not raised.
  const bool healthy = ctx_ && static_cast<bool>(SP_CU(*drv_, cuCtxSynchronize()));
  for (auto p : allocs_) (void)SP_CU(*drv_, cuMemFree(p));
  if (stream_) (void)SP_CU(*drv_, cuStreamDestroy(stream_));
  ProcessContext& pc = process_context();
  const bool shared = ctx_ && ctx_ == pc.ctx;
  if (module_ && shared && healthy && module_ != pc.module) (void)SP_CU(*drv_, cuModuleUnload(module_));
  if (shared && healthy) return;  // kept for the next probe of this process
  if (module_) (void)SP_CU(*drv_, cuModuleUnload(module_));
  if (ctx_) (void)SP_CU(*drv_, cuCtxDestroy(ctx_));
  if (shared) pc = ProcessContext{};
}

Expected<cu::CUfunction> GpuSession::function(const std::string& name) {
  cu::CUfunction f = nullptr;
  SP_CU_TRY(*drv_, cuModuleGetFunction(&f, module_, name.c_str()));
  return f;
}

Expected<cu::CUdeviceptr> GpuSession::alloc(size_t bytes) {
  cu::CUdeviceptr p = 0;
  SP_CU_TRY(*drv_, cuMemAlloc(&p, std::max<size_t>(bytes, 16)));
  allocs_.push_back(p);
  return p;
}

Status GpuSession::upload(cu::CUdeviceptr dst, const void* src, size_t bytes) {
  return SP_CU(*drv_, cuMemcpyHtoD(dst, src, bytes));
}
Status GpuSession::download(void* dst, cu::CUdeviceptr src, size_t bytes) {
  return SP_CU(*drv_, cuMemcpyDtoH(dst, src, bytes));
}
Status GpuSession::fill32(cu::CUdeviceptr dst, uint32_t value, size_t count) {
  return SP_CU(*drv_, cuMemsetD32(dst, value, count));
}

Status GpuSession::allow_dynamic_smem(cu::CUfunction f, unsigned smem) {
  if (smem == 0) return Ok{};
  return SP_CU(*drv_, cuFuncSetAttribute(f, cu::kFuncMaxDynamicSharedSizeBytes, static_cast<int>(smem)));
}

Status GpuSession::launch(cu::CUfunction f, const LaunchShape& s, void* params) {
  if (auto st = allow_dynamic_smem(f, s.smem); !st) return st;
  void* args[] = {params};
  return SP_CU(*drv_, cuLaunchKernel(f, s.grid_x, s.grid_y, s.grid_z, s.block, 1, 1, s.smem, stream_, args, nullptr));
}

Status GpuSession::sync() { return SP_CU(*drv_, cuStreamSynchronize(stream_)); }

Expected<double> GpuSession::time_median_ms(const std::function<Status()>& body, int warmup, int reps) {
  for (int i = 0; i < warmup; ++i)
    if (auto s = body(); !s) return s.error();
  // One event pair per run, all runs queued before the one synchronisation: each interval holds
  // only its own launch's device time, not the host's launch latency (a run that waited for the
  // previous one would start its "begin" event while the host was still submitting the kernel).
  std::vector<cu::CUevent> ev(2 * static_cast<size_t>(std::max(reps, 0)), nullptr);
  auto destroy = [&] {
    for (auto e : ev)
      if (e) (void)SP_CU(*drv_, cuEventDestroy(e));
  };
  std::vector<double> ms;
  Status st = [&]() -> Status {
    for (auto& e : ev) SP_CU_TRY(*drv_, cuEventCreate(&e, 0));
    for (int i = 0; i < reps; ++i) {
      SP_CU_TRY(*drv_, cuEventRecord(ev[2 * i], stream_));
      if (auto s = body(); !s) return s.error();
      SP_CU_TRY(*drv_, cuEventRecord(ev[2 * i + 1], stream_));
    }
    if (reps > 0) SP_CU_TRY(*drv_, cuEventSynchronize(ev.back()));
    for (int i = 0; i < reps; ++i) {
      float t = 0;
      SP_CU_TRY(*drv_, cuEventElapsedTime(&t, ev[2 * i], ev[2 * i + 1]));
      ms.push_back(t);
    }
    return Ok{};
  }();
  destroy();
  if (!st) return st.error();
  std::sort(ms.begin(), ms.end());
  return ms.empty() ? 0.0 : ms[ms.size() / 2];
}

uint64_t GpuSession::device_free_bytes() {
  size_t free_bytes = 0, total_bytes = 0;
  if (drv_->api().cuMemGetInfo != nullptr && SP_CU(*drv_, cuMemGetInfo(&free_bytes, &total_bytes))) return free_bytes;
  return static_cast<uint64_t>(std::max<int64_t>(gpu_.memory_bytes, 0));
}

Expected<double> GpuSession::copy_ceiling_bytes_per_s(size_t bytes) {
  auto src = alloc(bytes);
  if (!src) return src.error();
  auto dst = alloc(bytes);
  if (!dst) return dst.error();
  if (auto s = fill32(*src, 0x3f800001u, bytes / 4); !s) return s.error();
  auto ms = time_median_ms([&] { return SP_CU(*drv_, cuMemcpyDtoDAsync(*dst, *src, bytes, stream_)); }, 2, 10);
  if (!ms) return ms.error();
  for (auto p : {*src, *dst}) {
    (void)SP_CU(*drv_, cuMemFree(p));
    allocs_.erase(std::remove(allocs_.begin(), allocs_.end(), p), allocs_.end());
  }
  return 2.0 * static_cast<double>(bytes) / (*ms * 1e-3);
}

Json GpuSession::kernel_evidence(cu::CUfunction f, const std::string& name, const LaunchShape& s) {
  auto attr = [&](int a) {
    int v = -1;
    (void)drv_->check(drv_->api().cuFuncGetAttribute(&v, a, f), "cuFuncGetAttribute(&v, attr, f)", __FILE__, __LINE__);
    return v;
  };
  Json e;
  e["kernel"] = name;
  e["registers"] = attr(cu::kFuncNumRegs);
  e["local_bytes"] = attr(cu::kFuncLocalSizeBytes);
  e["static_smem_bytes"] = attr(cu::kFuncSharedSizeBytes);
  e["binary_version"] = attr(cu::kFuncBinaryVersion);
  e["dynamic_smem_bytes"] = s.smem;
  e["threads_per_block"] = s.block;
  e["grid"] = {s.grid_x, s.grid_y, s.grid_z};
  (void)allow_dynamic_smem(f, s.smem);
  int blocks = -1;
  (void)SP_CU(*drv_, cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, f, static_cast<int>(s.block), s.smem));
  e["occupancy_blocks_per_sm"] = blocks;
  return e;
}

}  // namespace specprobe
