// tensor_fma_overlap: do fp8 wgmma and fp32 FADD/FFMA work overlap on one SM (sm_90a)?
//
// The MQA logits kernel at next_n >= 3 does, per 64-token tile, an m64nNk128 e4m3 wgmma and an fp32
// epilogue over its N / 2 accumulators per thread (x + |x|, one FFMA by a weight, per score). An
// ncu profile measured tensor pipe 48% active and issue slots 53% busy at next_n 4
// (docs/perf/kernels-history.md#ncu-profile-fixes), close to the two summed; this benchmark asks
// the hardware directly. One CTA per SM (the grid is the SM count, 200 KB of shared memory each),
// up to four warpgroups, each with a role:
//   T  wgmma only: four m64n128k32 e4m3 k-steps into 64 f32 accumulators, commit, wait; repeat.
//   F  epilogue arithmetic only: per step, 64 scores each get x + |x| and one FFMA (the
//      kernel's epilogue without the reductions and stores); repeat.
//   M  the kernel's own order inside one warpgroup: T's wgmma, wait, then F's arithmetic on the
//      accumulators just produced; repeat.
//   E  M with the arithmetic done twice (256 FMA-pipe instructions per step, about the real
//      epilogue's count per chunk of N = 128).
//   G  F with one instruction per score: FFMA |x| * w (the FFMA's operand modifier), the form
//      an epilogue takes when the linear half of relu(x) * w = (x + |x|) * w / 2 is computed
//      elsewhere (docs/perf/kernels-history.md#linear-half-ring-depth).
//   P  128 x FFMA, A  128 x FADD, H  64 x FFMA (no operand modifiers): which FMA-pipe work stalls T.
//   S  64 x (FMNMX + FFMA): relu on the ALU pipe, the held-weights kernel's epilogue.
//   L  8 x LDS.128 + 16 FFMA: the epilogue's shared-memory weight loads beside T's operand reads.
// Every warpgroup runs the same number of steps; each records clock64 at its start and end.
// It prints cycles per step of each role: if warpgroups of T and F beside each other take as
// long as each alone, the pipes overlap; if the F warps slow down by about the T time, they
// share something (issue, register-file ports).
// Build: nvcc -O3 -arch=sm_90a -std=c++17 bench/tensor_fma_overlap.cu -o tensor_fma_overlap
// (cmake target tensor_fma_overlap_bench, not built by default). Usage: tensor_fma_overlap [steps]
// (10..10000000, default 20000; anything else: usage message, exit 2; no GPU: the CUDA error, exit 1).
#include <cuda_runtime.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "../kernels/wgmma_sm90.cuh"

namespace {

constexpr int kSmemBytes = 200 * 1024;  // keeps one CTA per SM
constexpr int kN = 128;                 // wgmma N (two query rows of 64 heads)

__global__ void __launch_bounds__(512, 1) overlap_kernel(uint32_t roles, int steps, long long* cycles, float* sink) {
#ifdef SPK_HAS_WGMMA
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  const uint32_t raw = static_cast<uint32_t>(__cvta_generic_to_shared(smem_raw));
  unsigned char* smem = smem_raw + (((raw + 1023u) & ~1023u) - raw);
  // A: 64 x 128 e4m3 (8 KB), B: 128 x 128 e4m3 (16 KB); small finite values (|x| <= 2).
  for (int i = threadIdx.x; i < 32 * 1024; i += blockDim.x)
    smem[i] = static_cast<unsigned char>(((i * 37) & 0x3F) | ((i & 1) << 7));
  __syncthreads();
  const int wg = __shfl_sync(0xffffffffu, threadIdx.x >> 7, 0);
  const int role = (roles >> (4 * wg)) & 0xF;  // index in " TFMEGPAHSL" (1 = T ... 10 = L)
  const uint32_t a = static_cast<uint32_t>(__cvta_generic_to_shared(smem)), b = a + 8 * 1024;
  float acc[kN / 2];
  for (int i = 0; i < kN / 2; ++i) acc[i] = 0.001f * (threadIdx.x + i) - 0.05f;
  float w[4];
  for (int i = 0; i < 4; ++i) w[i] = 0.25f + 0.01f * i;
  float s[4] = {0.f, 0.f, 0.f, 0.f};
  __syncwarp();
  const long long t0 = clock64();
  if (role == 1 || role == 3 || role == 4) {
    for (int st = 0; st < steps; ++st) {
#pragma unroll
      for (int i = 0; i < kN / 2; ++i) spk::reg_fence(acc[i]);
      spk::wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < 4; ++kk)  // K-major 128-byte rows, 128B swizzle, as the MQA kernel's
        spk::WgmmaE4m3<kN>::mma(acc, spk::smem_desc_at<128>(spk::smem_desc_lo(a) + 2 * kk),
                                spk::smem_desc_at<128>(spk::smem_desc_lo(b) + 2 * kk), kk);
      spk::wgmma_commit();
      spk::wgmma_wait<0>();
#pragma unroll
      for (int i = 0; i < kN / 2; ++i) spk::reg_fence(acc[i]);
      if (role >= 3) {
#pragma unroll
        for (int i = 0; i < kN / 2; ++i) s[i & 3] = fmaf(acc[i] + fabsf(acc[i]), w[(i >> 2) & 3], s[i & 3]);
      }
      if (role == 4) {  // E: twice M's arithmetic (the real epilogue's ~240 instructions per chunk)
#pragma unroll
        for (int i = 0; i < kN / 2; ++i) s[i & 3] = fmaf(acc[i] - fabsf(acc[i]), w[(i >> 2) & 3], s[i & 3]);
      }
    }
  } else if (role == 5) {
    for (int st = 0; st < steps; ++st) {
#pragma unroll
      for (int i = 0; i < kN / 2; ++i) acc[i] = fmaf(fabsf(acc[i]), w[(i >> 2) & 3], -0.01f);
    }
  } else if (role == 6) {  // P: 128 x FFMA (no modifier): two dependent FFMAs per score
    for (int st = 0; st < steps; ++st) {
#pragma unroll
      for (int i = 0; i < kN / 2; ++i) acc[i] = fmaf(fmaf(acc[i], w[(i >> 2) & 3], 0.01f), w[(i + 1) & 3], -0.01f);
    }
  } else if (role == 7) {  // A: 128 x FADD (no modifier)
    for (int st = 0; st < steps; ++st) {
#pragma unroll
      for (int i = 0; i < kN / 2; ++i) acc[i] = (acc[i] + w[(i >> 2) & 3]) + w[(i + 1) & 3];
    }
  } else if (role == 8) {  // H: 64 x FFMA (no modifier)
    for (int st = 0; st < steps; ++st) {
#pragma unroll
      for (int i = 0; i < kN / 2; ++i) acc[i] = fmaf(acc[i], w[(i >> 2) & 3], -0.01f);
    }
  } else if (role == 9) {  // S: 64 x (FMNMX + FFMA): relu on the ALU pipe
    for (int st = 0; st < steps; ++st) {
#pragma unroll
      for (int i = 0; i < kN / 2; ++i) acc[i] = fmaf(fmaxf(acc[i], 0.f), w[(i >> 2) & 3], -0.01f);
    }
  } else if (role == 10) {  // L: 8 x LDS.128 per 16 FFMA (the weights' shared-memory loads)
    const float* ws = reinterpret_cast<const float*>(smem + 24 * 1024) + (threadIdx.x & 3) * 36;
    for (int st = 0; st < steps; ++st) {
#pragma unroll
      for (int i = 0; i < 8; ++i) {
        const float4 v = *reinterpret_cast<const float4*>(ws + 4 * ((i + st) & 7));
        acc[4 * i] = fmaf(acc[4 * i], v.x, v.y);
        acc[4 * i + 1] = fmaf(acc[4 * i + 1], v.z, v.w);
      }
    }
  } else if (role == 2) {
    for (int st = 0; st < steps; ++st) {
      // Each step's scores depend on the last step's (an empty asm fence is invisible to ptxas,
      // which would hoist the FADDs): 64 independent FADD -> FFMA chains per thread.
#pragma unroll
      for (int i = 0; i < kN / 2; ++i) acc[i] = fmaf(acc[i] + fabsf(acc[i]), w[(i >> 2) & 3], -0.01f);
    }
  }
  const long long t1 = clock64();
  if (role != 0 && (threadIdx.x & 127) == 0) cycles[blockIdx.x * 4 + wg] = t1 - t0;
  float x = s[0] + s[1] + s[2] + s[3];
  for (int i = 0; i < kN / 2; ++i) x += acc[i];
  if (x == 1234.5f) sink[threadIdx.x] = x;  // keeps the work; practically never stores
#endif
}

#define CK(x)                                                       \
  do {                                                              \
    cudaError_t e_ = (x);                                           \
    if (e_ != cudaSuccess) {                                        \
      std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                 \
    }                                                               \
  } while (0)

bool parse_steps(const char* s, int* out) {
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0' || v < 10 || v > 10000000) return false;
  *out = static_cast<int>(v);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  int steps = 20000;
  if (argc > 2 || (argc == 2 && !parse_steps(argv[1], &steps))) {
    std::fprintf(stderr, "usage: tensor_fma_overlap [steps]  (steps: an integer in 10..10000000, default 20000)\n");
    return 2;
  }
  int dev = 0, sms = 0, clock_khz = 0;
  CK(cudaGetDevice(&dev));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  CK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, dev));
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, dev));
  CK(cudaFuncSetAttribute(overlap_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes + 1024));
  long long* d_cycles = nullptr;
  float* d_sink = nullptr;
  CK(cudaMalloc(&d_cycles, sizeof(long long) * sms * 4));
  CK(cudaMalloc(&d_sink, sizeof(float) * 512));
  std::printf(
      "%s, %d SMs; %d steps per warpgroup; one step: T = 4 x m64n128k32 e4m3 wgmma (1 M MAC), "
      "F = 64 x (FADD |x| + FFMA), G = 64 x FFMA |x|, P / A = 128 x FFMA / FADD, H = 64 x FFMA, "
      "S = 64 x (FMNMX + FFMA), L = 8 x LDS.128 + 16 FFMA per thread\n",
      prop.name, sms, steps);
  std::printf("%-8s %-28s %9s %5s\n", "roles", "cycles/step per warpgroup", "kernel us", "GHz");
  const char* configs[] = {"T",   "TT",   "TTT",  "TTTT", "F",    "FF",   "FFF",  "FFFF", "TF",   "TFF", "TFFF",
                           "TTF", "TTFF", "TTTF", "M",    "MM",   "MMM",  "MMMM", "E",    "EE",   "EEE", "EEEE",
                           "G",   "GG",   "TG",   "TTG",  "TTGG", "P",    "PP",   "TTPP", "A",    "AA",  "TTAA",
                           "H",   "HH",   "TTHH", "S",    "SS",   "TTSS", "L",    "LL",   "TTLL", "TTL"};
  for (const char* cfg : configs) {
    const std::string c(cfg);
    uint32_t roles = 0;
    for (size_t i = 0; i < c.size(); ++i)
      roles |= static_cast<uint32_t>(std::string(" TFMEGPAHSL").find(c[i])) << (4 * i);
    const int threads = 128 * static_cast<int>(c.size());
    CK(cudaMemset(d_cycles, 0, sizeof(long long) * sms * 4));
    overlap_kernel<<<sms, threads, kSmemBytes + 1024>>>(roles, steps / 10, d_cycles, d_sink);  // warm-up
    CK(cudaDeviceSynchronize());
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    CK(cudaEventRecord(e0));
    overlap_kernel<<<sms, threads, kSmemBytes + 1024>>>(roles, steps, d_cycles, d_sink);
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    CK(cudaGetLastError());
    float ms = 0.f;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    std::vector<long long> cyc(static_cast<size_t>(sms) * 4);
    CK(cudaMemcpy(cyc.data(), d_cycles, sizeof(long long) * cyc.size(), cudaMemcpyDeviceToHost));
    std::string per;
    double longest = 0;
    for (size_t i = 0; i < c.size(); ++i) {
      double sum = 0;
      for (int m = 0; m < sms; ++m) sum += static_cast<double>(cyc[static_cast<size_t>(m) * 4 + i]);
      longest = std::max(longest, sum / sms);
      char buf[32];
      std::snprintf(buf, sizeof buf, "%c:%.0f ", c[i], sum / sms / steps);
      per += buf;
    }
    // SM clock under this load: the slowest warpgroup's cycles over the kernel's time.
    std::printf("%-8s %-28s %9.1f %5.2f\n", cfg, per.c_str(), ms * 1000.0, longest / (ms * 1e6));
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
  }
  return 0;
}
