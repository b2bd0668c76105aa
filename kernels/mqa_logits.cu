// Paged MQA logits (DeepSeek V3.2/V4 DSA indexer scoring) for any next_n:
//   logits[b*N+i, t] = sum_h relu(q[b,i,h,:] . k_t) * w[b*N+i, h] * scale_t,  t < context_lens[b,i]
// K cache in DeepGEMM's fused block layout (block_kv * D e4m3 values, then block_kv fp32 scales).
//
// Design (memory-bound): a CTA owns one request and a run of 128-token tiles; each tile is
// copied once from HBM into shared memory (cp.async, 3 stages) and every warp of the CTA -- one
// per (query row, head chunk, token slice) -- reads it from there, so all next_n query rows reuse
// one load. Tokens are the MMA's M side (ldmatrix from smem), heads its N side with q held in
// registers for the whole CTA. sm_89+ multiplies e4m3 directly (mma.m16n8k32.e4m3); sm_80/86
// converts e4m3 -> f16 exactly (value/256) and uses mma.m16n8k16.f16, undoing the 2^16 at the end.
// Per token the head sum is reduced inside the warp (shuffles), across head chunks in smem, then
// scaled and stored coalesced. Columns >= context_lens are never written (like DeepGEMM).
#include "common.cuh"
#include "wgmma_sm90.cuh"

namespace {

using specprobe_kernels::kMqaStages;
using specprobe_kernels::kMqaTileTokens;
using specprobe_kernels::MqaLogitsParams;

template <int D, int HC>
__device__ __forceinline__ void mqa_logits_body(const MqaLogitsParams& p) {
  constexpr int T = kMqaTileTokens;
  constexpr int RS = D + 16;  // smem row stride (bytes): conflict-free ldmatrix
  constexpr int kStageBytes = T * RS + T * 4;
  constexpr int NT = HC / 8;  // n-tiles (8 heads each) per warp
  constexpr int KS = D / 32;  // k-steps of 32 e4m3
  extern __shared__ __align__(128) unsigned char smem[];

  const int b = blockIdx.y;
  const int N = p.next_n;
  const int H = p.heads;
  const int hcn = H / HC;
  const int row0 = blockIdx.z * p.rows_per_cta;
  const int rows = min(p.rows_per_cta, N - row0);
  const int tasks = p.rows_per_cta * hcn;
  float* partial = reinterpret_cast<float*>(smem + kMqaStages * kStageBytes);
  float* wsm = partial + tasks * T;  // [tasks][HC] weights (kept out of registers)

  const int* ctx_lens = reinterpret_cast<const int*>(p.context_lens) + b * N;
  int ctx_max = 0;
  for (int r = 0; r < rows; ++r) ctx_max = max(ctx_max, ctx_lens[row0 + r]);
  const int num_tiles = (ctx_max + T - 1) / T;
  const int tile_begin = blockIdx.x * p.tiles_per_cta;
  const int tile_end = min(tile_begin + p.tiles_per_cta, num_tiles);
  if (tile_begin >= tile_end) return;

  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int g = lane >> 2, tig = lane & 3;
  const int S = p.token_splits;
  const int task = warp / S, split = warp % S;
  const int row_local = task / hcn, hc = task % hcn;
  const bool active = row_local < rows;
  const int qrow = b * N + row0 + row_local;  // row of weights / logits

  // q fragments (B operand: col g = head, k = d); weights go to smem.
  uint32_t qf[NT][KS][2];
  {
    const uint8_t* q = reinterpret_cast<const uint8_t*>(p.q);
    const float* w = reinterpret_cast<const float*>(p.weights);
#pragma unroll
    for (int j = 0; j < NT; ++j) {
      const int h = hc * HC + 8 * j + g;
      const uint8_t* qh = q + (static_cast<size_t>(qrow) * H + h) * D;
#pragma unroll
      for (int kk = 0; kk < KS; ++kk) {
        qf[j][kk][0] = active ? *reinterpret_cast<const uint32_t*>(qh + 32 * kk + 4 * tig) : 0u;
        qf[j][kk][1] = active ? *reinterpret_cast<const uint32_t*>(qh + 32 * kk + 16 + 4 * tig) : 0u;
      }
    }
    for (int i = lane; i < HC && active; i += 32)
      if (split == 0) wsm[task * HC + i] = w[static_cast<size_t>(qrow) * H + hc * HC + i];
  }

  const uint8_t* kv = reinterpret_cast<const uint8_t*>(p.kv);
  const int* btab = reinterpret_cast<const int*>(p.block_table) + static_cast<size_t>(b) * p.block_table_stride;
  const size_t block_bytes = static_cast<size_t>(p.block_kv) * (D + 4);
  const int nthreads = blockDim.x;

  auto load_tile = [&](int tile, int stage) {
    unsigned char* st = smem + stage * kStageBytes;
    constexpr int kChunksPerRow = D / 16;
    constexpr int kValueChunks = T * kChunksPerRow;
    constexpr int kTotal = kValueChunks + T / 4;
    for (int c = threadIdx.x; c < kTotal; c += nthreads) {
      int r, col;
      bool scale;
      if (c < kValueChunks) {
        r = c / kChunksPerRow;
        col = c % kChunksPerRow;
        scale = false;
      } else {
        r = (c - kValueChunks) * 4;
        col = 0;
        scale = true;
      }
      const int tok = tile * T + r;
      const bool valid = tok < ctx_max;
      const uint8_t* src = kv;
      if (valid) {
        const int blk = btab[tok / p.block_kv];
        const int off = tok % p.block_kv;
        src = kv + static_cast<size_t>(blk) * block_bytes +
              (scale ? static_cast<size_t>(p.block_kv) * D + off * 4 : static_cast<size_t>(off) * D + col * 16);
      }
      void* dst = scale ? static_cast<void*>(st + T * RS + r * 4) : static_cast<void*>(st + r * RS + col * 16);
      spk::cp_async16(dst, src, valid);
    }
  };

#pragma unroll
  for (int s = 0; s < kMqaStages - 1; ++s) {
    if (tile_begin + s < tile_end) load_tile(tile_begin + s, s);
    spk::cp_async_commit();
  }

  const int toks_per_warp = T / S;
  for (int tile = tile_begin; tile < tile_end; ++tile) {
    const int it = tile - tile_begin;
    spk::cp_async_wait<kMqaStages - 2>();
    __syncthreads();
    if (tile + kMqaStages - 1 < tile_end) load_tile(tile + kMqaStages - 1, (it + kMqaStages - 1) % kMqaStages);
    spk::cp_async_commit();

    const unsigned char* st = smem + (it % kMqaStages) * kStageBytes;
    if (active) {
      for (int m0 = split * toks_per_warp; m0 < (split + 1) * toks_per_warp; m0 += 16) {
        float acc[NT][4];
#pragma unroll
        for (int j = 0; j < NT; ++j) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.f;
        const unsigned char* arow = st + (m0 + (lane & 7) + ((lane >> 3) & 1) * 8) * RS + (lane >> 4) * 16;
#pragma unroll
        for (int kk = 0; kk < KS; ++kk) {
          uint32_t a[4];
          spk::ldmatrix_x4(a, arow + kk * 32);
#pragma unroll
          for (int j = 0; j < NT; ++j) {
#ifdef SPK_HAS_FP8_MMA
            spk::mma_e4m3_16832(acc[j], a, qf[j][kk][0], qf[j][kk][1]);
#else
            spk::mma_f16_16816(
                acc[j], spk::e4m3x2_to_f16x2_div256(a[0], false), spk::e4m3x2_to_f16x2_div256(a[1], false),
                spk::e4m3x2_to_f16x2_div256(a[0], true), spk::e4m3x2_to_f16x2_div256(a[1], true),
                spk::e4m3x2_to_f16x2_div256(qf[j][kk][0], false), spk::e4m3x2_to_f16x2_div256(qf[j][kk][0], true));
            spk::mma_f16_16816(
                acc[j], spk::e4m3x2_to_f16x2_div256(a[2], false), spk::e4m3x2_to_f16x2_div256(a[3], false),
                spk::e4m3x2_to_f16x2_div256(a[2], true), spk::e4m3x2_to_f16x2_div256(a[3], true),
                spk::e4m3x2_to_f16x2_div256(qf[j][kk][1], false), spk::e4m3x2_to_f16x2_div256(qf[j][kk][1], true));
#endif
          }
        }
        float p0 = 0.f, p1 = 0.f;  // tokens m0+g and m0+g+8
#pragma unroll
        for (int j = 0; j < NT; ++j) {
          const float2 wv = *reinterpret_cast<const float2*>(wsm + task * HC + 8 * j + 2 * tig);
          p0 += fmaxf(acc[j][0], 0.f) * wv.x + fmaxf(acc[j][1], 0.f) * wv.y;
          p1 += fmaxf(acc[j][2], 0.f) * wv.x + fmaxf(acc[j][3], 0.f) * wv.y;
        }
        p0 += __shfl_xor_sync(0xffffffffu, p0, 1);
        p1 += __shfl_xor_sync(0xffffffffu, p1, 1);
        p0 += __shfl_xor_sync(0xffffffffu, p0, 2);
        p1 += __shfl_xor_sync(0xffffffffu, p1, 2);
        if (tig == 0) partial[task * T + m0 + g] = p0;
        if (tig == 1) partial[task * T + m0 + g + 8] = p1;
      }
    }
    __syncthreads();
#ifdef SPK_HAS_FP8_MMA
    constexpr float kFix = 1.f;
#else
    constexpr float kFix = 65536.f;  // both operands were value / 256
#endif
    const float* scales = reinterpret_cast<const float*>(st + T * RS);
    float* logits = reinterpret_cast<float*>(p.logits);
    for (int idx = threadIdx.x; idx < rows * T; idx += nthreads) {
      const int r = idx / T, t = idx % T;
      const int tok = tile * T + t;
      if (tok < ctx_lens[row0 + r]) {
        float s = 0.f;
        for (int c = 0; c < hcn; ++c) s += partial[(r * hcn + c) * T + t];
        logits[static_cast<size_t>(b * N + row0 + r) * p.logits_stride + tok] = s * scales[t] * kFix;
      }
    }
    (void)tasks;
  }
  spk::cp_async_wait<0>();
}

}  // namespace

// The mma.sync kernel keeps 2 CTAs/SM elsewhere; on sm_90 its hc64 variant needs more than 128
// registers (it spilled there), and sm_90 uses the wgmma kernel below anyway.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900
#define SPK_MQA_MINB(HC) ((HC) == 64 ? 1 : 2)
#else
#define SPK_MQA_MINB(HC) 2
#endif
#define SPK_MQA(D, HC)                                                                                              \
  extern "C" __global__ void __launch_bounds__(256, SPK_MQA_MINB(HC)) mqa_logits_d##D##_hc##HC(MqaLogitsParams p) { \
    mqa_logits_body<D, HC>(p);                                                                                      \
  }
SPK_MQA(64, 16)
SPK_MQA(64, 32)
SPK_MQA(64, 64)
SPK_MQA(128, 16)
SPK_MQA(128, 32)
SPK_MQA(128, 64)

// ---------------------------------------------------------------------------------------------
// sm_90a: copy-engine + e4m3 wgmma kernel (mqa_logits_tma_d<D>_h<H>_r<RPC>), 160 threads.
// Warp 4 is the producer: one lane walks this CTA's share of all requests' 64-token tiles and,
// per tile, reads the block-table entry and issues one bulk tensor copy (cp.async.bulk.tensor,
// 128B/64B-swizzled by the tensor map) of the tile's e4m3 rows plus one bulk copy of its fp32
// scales into a `stages`-deep ring, completing on the stage's "full" mbarrier. Warps 0-3 are
// one consumer warpgroup: wait "full", multiply the tile (A, M = 64 tokens, K = D) by q of RPC
// query rows x H heads (B, N = RPC * H <= 256, resident in shared memory, loaded once per
// request by the same copy engine), release the stage on its "empty" mbarrier as soon as the
// last wgmma has read it, then relu x weight, sum over heads (a quad reduce-scatter that leaves
// each lane its own outputs), x scale, store.
// next_n > RPC runs ceil(next_n / RPC) chunks over the same resident tile, so KV is read from
// HBM once for every row. The producer runs up to `stages` tiles ahead (its block-table reads
// are off the consumers' path), and two or three CTAs per SM overlap one CTA's epilogue with
// another's loads and matrix work.
// Precision: Hopper's e4m3 wgmma accumulates with ~14-bit precision (DeepSeek-V3 report 3.3.2):
// 1.6e-4 - 3.4e-4 max relative error measured here, 1.5e-4 for DeepGEMM's kernel of the same
// design; the probe's threshold for this path is kMqaLogitsMaxRelFp8Tc (probes/mqa_logits.hpp).
// Persistent grid: every CTA takes an equal share of all requests' tiles.
namespace {

using specprobe_kernels::kMqaTmaTileTokens;
using specprobe_kernels::MqaTmaParams;

__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_expect_tx(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
// Waits for the completion of the phase with the given parity (a fresh barrier counts its phase
// "before 0", parity 1, as complete: producers start waiting on "empty" with parity 1). The
// suspend-time hint (ns) lets the warp sleep until the phase completes instead of polling: without
// it try_wait came back every ~20 cycles, and the producer warps' polling loop ran 7.5 million
// times at next_n 4 (ncu, H100; docs/perf/kernels.md#mqa-mbarrier-wait), issue slots taken from the
// math warps beside them.
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
  uint32_t done;
  do {
    asm volatile(
        "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2, %3;\nselp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(bar), "r"(parity), "r"(0x989680u)
        : "memory");
  } while (!done);
}
__device__ __forceinline__ void tma_load_2d(uint32_t dst, const void* map, uint32_t bar, int c0, int c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::"r"(
          dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(bar)
      : "memory");
}
__device__ __forceinline__ void tma_load_3d(uint32_t dst, const void* map, uint32_t bar, int c0, int c1, int c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];\n" ::
          "r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(bar)
      : "memory");
}
__device__ __forceinline__ void tma_load_4d(uint32_t dst, const void* map, uint32_t bar, int c0, int c1, int c2,
                                            int c3) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5}], "
      "[%6];\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(bar)
      : "memory");
}
__device__ __forceinline__ void bulk_load(uint32_t dst, const void* src, uint32_t bytes, uint32_t bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(dst),
               "l"(src), "r"(bytes), "r"(bar)
               : "memory");
}
// Position in the stage ring, the same walk in the producer and the consumers: the stage and the
// parity of its current phase (flips each time the ring wraps).
struct RingPos {
  int stage = 0;
  uint32_t phase = 0;
  __device__ __forceinline__ void advance(int stages) {
    if (++stage == stages) {
      stage = 0;
      phase ^= 1u;
    }
  }
};
// Named barrier of one math warpgroup (ids 1..NW; 0 is __syncthreads).
__device__ __forceinline__ void wg_barrier(int id) { asm volatile("bar.sync %0, 128;\n" ::"r"(id) : "memory"); }
template <int REGS>
__device__ __forceinline__ void setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(REGS));
}
template <int REGS>
__device__ __forceinline__ void setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(REGS));
}

// relu(x) as the epilogue multiplies it by a weight. In kReluAdd kernels the weights are stored
// halved and relu(x) * w is computed as (x + |x|) * (w / 2): the same product bit for bit (the
// doubling and halving are exact), one FADD on the full-rate FMA pipe instead of FMNMX on the
// half-rate ALU pipe. That cut next_n 3 / 4 from 146 / 178 to 139-141 / 161-163 us on the H100, and
// in the warp-specialized kernels next_n 2 / 4 on an H200 from 88.0 / 150.3 to 86.9 / 148.4 us
// (docs/perf/kernels.md#mqa-epilogue). In the two-CTA kernel at RPC <= 2 FMNMX measured the same or
// 1-2 us better, so it stays there. The held-weights kernels (HELD > 0, below) use FMNMX on three
// of every four 8-column groups: beside other warpgroups' fp8 wgmma, FMNMX + FFMA warps leave the
// tensor pipe at full rate while FADD + FFMA warps stall it (bench/tensor_fma_overlap roles S and
// F, docs/perf/kernels.md#tensor-fma-overlap; with the weights in registers all-FMNMX measured
// 143.1-145.2 against 146.1 us at next_n 4), but FMNMX alone keeps the half-rate ALU pipe busy, so
// the fourth group takes the FADD. H200, same calls: next_n 4 135.0-135.8 against 139.1-139.8 us
// all-FMNMX, next_n 3 110.3-111.2 against 111.3-112.3; one group in two or in three measured the
// same as one in four, and FMNMX mixed into the kReluAdd kernels changed nothing (next_n 1 / 2
// within 0.5 us; docs/perf/kernels.md#mqa-epilogue).
template <int RPC, int NW, int HELD>
constexpr bool kReluAdd = HELD == 0 && (NW > 1 || RPC >= 3);
// Whether 8-column group `group` of a chunk (columns 8 group .. 8 group + 7) takes relu as x + |x|
// with halved weights.
template <int RPC, int NW, int HELD>
__device__ constexpr bool relu_by_add(int group) {
  return HELD > 0 ? group % 4 == 3 : kReluAdd<RPC, NW, HELD>;
}
template <int RPC, int NW, int HELD>
__device__ __forceinline__ float relu_term(float x, int group) {
  return relu_by_add<RPC, NW, HELD>(group) ? x + fabsf(x) : fmaxf(x, 0.f);
}

// One butterfly round over lane pairs (lane ^ mask): of the K values, indexed k, keep the half
// whose index bit BIT equals `hi` and add the partner's copy of it; w[i] is k with BIT removed.
template <int K, int BIT>
__device__ __forceinline__ void quad_round(const float (&v)[K], float (&w)[K / 2], bool hi, int mask) {
#pragma unroll
  for (int i = 0; i < K / 2; ++i) {
    const int lo = ((i >> BIT) << (BIT + 1)) | (i & ((1 << BIT) - 1));
    const int up = lo | (1 << BIT);
    const float keep = hi ? v[up] : v[lo];
    const float send = hi ? v[lo] : v[up];
    w[i] = keep + __shfl_xor_sync(0xffffffffu, send, mask);
  }
}

// HELD = 0: any number of chunks, each chunk's weights read from shared memory (or, where they
// fit, kept in registers across tiles of one chunk). HELD > 0: exactly HELD chunks, and the
// weights of all of them stay in registers for the whole request (the host picks such a kernel
// only for next_n with that many chunks). PR: the producer warpgroup's registers after
// setmaxnreg (the math warpgroups get the rest, mqa_ws_math_regs).
template <int D, int H, int RPC, int NW, int HELD = 0, int PR = specprobe_kernels::kMqaWsProducerRegs>
__device__ __forceinline__ void mqa_logits_tma_body(const MqaTmaParams& P) {
#ifdef SPK_HAS_WGMMA
  constexpr int T = kMqaTmaTileTokens;  // 64
  constexpr int N = RPC * H;
  constexpr int WS = N / 4 + 4;  // per-lane weight row (floats), padded against bank conflicts
  constexpr int KS = D / 32;     // wgmma k-steps of 32 e4m3
  const MqaLogitsParams& p = P.p;
  const int S = P.stages;
  constexpr bool kPaired = specprobe_kernels::mqa_ws_paired_rows(NW, RPC);
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  const uint32_t raw_addr = spk::smem_addr(smem_raw);
  unsigned char* smem = smem_raw + (((raw_addr + 1023u) & ~1023u) - raw_addr);

  const int n = p.next_n;
  const int nchunks = HELD > 0 ? HELD : (n + RPC - 1) / RPC;
  if (HELD > 0 && (n + RPC - 1) / RPC != HELD) __trap();  // a host bug: wrong kernel for next_n
  // The warp index through a shuffle from lane 0: the compiler then knows it is warp-uniform.
  // That took the spills out of the 4 x r2 kernel (32 bytes stored, 84 loaded per thread).
  const int tid = threadIdx.x, warp = __shfl_sync(0xffffffffu, tid >> 5, 0), lane = tid & 31;
  // Roles: warps 0 .. 4 * NW - 1 are the math warpgroups (mw = warp / 4); the rest produce, one
  // warp per math warpgroup (NW = 1: the single warp 4).
  const bool producer = warp >= 4 * NW;
  const int mw = producer ? warp - 4 * NW : warp >> 2;

  const int slot_bytes = specprobe_kernels::mqa_tma_slot_bytes(D, H, RPC, n, S);
  unsigned char* qs = smem + mw * slot_bytes;                    // [nchunks][N][D] e4m3, swizzled
  unsigned char* kvs = qs + nchunks * N * D;                     // [S][T][D] e4m3, swizzled
  float* scs = reinterpret_cast<float*>(kvs + S * T * D);        // [S][T]
  uint64_t* bars = reinterpret_cast<uint64_t*>(scs + S * T);     // full[S], empty[S], q_full, q_empty
  float* wsm = reinterpret_cast<float*>(bars + 2 * S + 2);       // [nchunks][4][WS]
  int* ctx_s = reinterpret_cast<int*>(wsm + nchunks * 4 * WS);   // [n]
  int* prefix = reinterpret_cast<int*>(smem + NW * slot_bytes);  // [batch + 1]

  const int* ctx_all = reinterpret_cast<const int*>(p.context_lens);
  auto request_ctx = [&](int b) {
    int m = 0;
    for (int r = 0; r < n; ++r) m = max(m, ctx_all[b * n + r]);
    return m;
  };
  // Block-wide exclusive scan of tiles per request (warps 0-3, a few requests per thread).
  int* warp_sums = prefix + p.batch + 1;  // [4] (dynamic: the host's byte count covers all of it)
  if (tid < 128) {
    const int per = (p.batch + 127) / 128;
    int local = 0;
    for (int i = 0; i < per; ++i) {
      const int b = tid * per + i;
      if (b < p.batch) local += (request_ctx(b) + T - 1) / T;
    }
    int incl = local;
#pragma unroll
    for (int off = 1; off < 32; off <<= 1) {
      const int v = __shfl_up_sync(0xffffffffu, incl, off);
      if (lane >= off) incl += v;
    }
    if (lane == 31) warp_sums[warp] = incl;
    wg_barrier(1);
    int run = incl - local;
    for (int w = 0; w < warp; ++w) run += warp_sums[w];
    for (int i = 0; i < per; ++i) {
      const int b = tid * per + i;
      if (b < p.batch) {
        prefix[b] = run;
        run += (request_ctx(b) + T - 1) / T;
      }
    }
    if (tid == 0) prefix[p.batch] = warp_sums[0] + warp_sums[1] + warp_sums[2] + warp_sums[3];
  }
  const uint32_t bar0 = spk::smem_addr(bars);
  const uint32_t q_full = bar0 + 16 * S, q_empty = q_full + 8;
  if (!producer && (tid & 127) == 0) {  // each math warpgroup's first thread: its slot's barriers
    for (int s = 0; s < S; ++s) {
      mbar_init(bar0 + 8 * s, 1);          // full: the producer's expect_tx arrival + the bytes
      mbar_init(bar0 + 8 * (S + s), 128);  // empty: every consumer thread
    }
    mbar_init(q_full, 1);
    mbar_init(q_empty, 128);
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();
  // This math warpgroup's share of all tiles: NW shares per CTA, in CTA order.
  const int total = prefix[p.batch];
  const int shares = gridDim.x * NW, share = blockIdx.x * NW + mw;
  const int g_begin = static_cast<int>(static_cast<long long>(total) * share / shares);
  const int g_end = static_cast<int>(static_cast<long long>(total) * (share + 1) / shares);
  // The run of one request's tiles that starts at global tile position gpos (producer and
  // consumers walk the same segments): request = last b with prefix[b] <= gpos (empty requests
  // skipped), its tiles [tile_begin, tile_end) clipped to this math warpgroup's share.
  struct Segment {
    int b, tile_begin, tile_end;
  };
  auto segment_at = [&](int gpos) {
    int lo = 0, hi = p.batch - 1;
    while (lo < hi) {
      const int mid = (lo + hi + 1) >> 1;
      if (prefix[mid] <= gpos)
        lo = mid;
      else
        hi = mid - 1;
    }
    const int tb = gpos - prefix[lo];
    return Segment{lo, tb, min(prefix[lo + 1] - prefix[lo], tb + (g_end - gpos))};
  };
  const uint32_t qs_addr = spk::smem_addr(qs), kv_addr = spk::smem_addr(kvs), sc_addr = spk::smem_addr(scs);

  if (producer) {
    // ---- producer: one lane per math warpgroup ----
    // NW > 1: the producer warpgroup gives its registers down to PR (all four
    // warps, before any returns: setmaxnreg is warpgroup-wide); the math warpgroups take them.
    if constexpr (NW > 1) setmaxnreg_dec<PR>();
    if (lane != 0 || mw >= NW || g_begin >= g_end) return;  // NW < 4: the spare producer warps idle
    const uint8_t* kv = reinterpret_cast<const uint8_t*>(p.kv);
    const int bkv = p.block_kv;
    const size_t block_bytes = static_cast<size_t>(bkv) * (D + 4);
    RingPos ring;
    int seg = 0;
    for (int gpos = g_begin; gpos < g_end; ++seg) {
      const Segment sg = segment_at(gpos);
      const int b = sg.b, tb = sg.tile_begin, te = sg.tile_end;
      gpos += te - tb;
      const int ctx_max = request_ctx(b);
      if (seg > 0) mbar_wait(q_empty, (seg - 1) & 1);  // the previous request's q is no longer read
      mbar_expect_tx(q_full, nchunks * N * D);
      for (int c = 0; c < nchunks; ++c) {
        if constexpr (kPaired)
          tma_load_4d(qs_addr + c * N * D, &P.q_map, q_full, 0, 0, b * n + c * RPC, 0);
        else
          tma_load_2d(qs_addr + c * N * D, &P.q_map, q_full, 0, b * n * H + c * N);
      }
      const int* btab = reinterpret_cast<const int*>(p.block_table) + static_cast<size_t>(b) * p.block_table_stride;
      for (int tile = tb; tile < te; ++tile) {
        const uint32_t full = bar0 + 8 * ring.stage;
        mbar_wait(bar0 + 8 * (S + ring.stage), ring.phase ^ 1u);
        const int tok0 = tile * T;
        if (bkv >= T) {  // the tile lies inside one block (block_kv % 64 == 0)
          const int blk = btab[tok0 / bkv], off = tok0 % bkv;
          mbar_expect_tx(full, T * D + T * 4);
          tma_load_3d(kv_addr + ring.stage * T * D, &P.kv_map, full, 0, off, blk);
          bulk_load(sc_addr + ring.stage * T * 4,
                    kv + static_cast<size_t>(blk) * block_bytes + static_cast<size_t>(bkv) * D + off * 4, T * 4, full);
        } else {  // 64 / block_kv blocks; those past the context are not read (rows never stored)
          const int parts = min(T / bkv, (ctx_max - tok0 + bkv - 1) / bkv);
          mbar_expect_tx(full, parts * bkv * (D + 4));
          for (int j = 0; j < parts; ++j) {
            const int blk = btab[tok0 / bkv + j];
            tma_load_3d(kv_addr + ring.stage * T * D + j * bkv * D, &P.kv_map, full, 0, 0, blk);
            bulk_load(sc_addr + ring.stage * T * 4 + j * bkv * 4,
                      kv + static_cast<size_t>(blk) * block_bytes + static_cast<size_t>(bkv) * D, bkv * 4, full);
          }
        }
        ring.advance(S);
      }
    }
    return;
  }

  // ---- math warpgroup mw (warps 4 * mw .. 4 * mw + 3) ----
  if constexpr (NW > 1) setmaxnreg_inc<specprobe_kernels::mqa_ws_math_regs(NW, PR)>();
  if (g_begin >= g_end) return;
  const int g = lane >> 2, tig = lane & 3, wtid = tid & 127, wwarp = warp & 3;
  const float* w = reinterpret_cast<const float*>(p.weights);
  float* logits = reinterpret_cast<float*>(p.logits);
  RingPos ring;
  int seg = 0;
  // N <= 128: the lane's N / 4 weights of a chunk live in registers (see the chunk loop); at
  // N = 128 that took next_n 2 from 105.5 to 101.8 us on an H200
  // (docs/perf/kernels.md#mqa-epilogue). Wider chunks have no registers to spare next to their
  // N / 2 accumulators, nor has a math warpgroup of four (104 registers) at N = 128 (224 bytes
  // spilled).
  // HELD > 0: the weights of every chunk, loaded once per request. Reloading them per chunk
  // costs more than the loads' count suggests: beside the wgmma's operand reads the epilogue's
  // shared-memory loads wait (tensor_fma_overlap role L: 149 -> 518 cycles per step beside two
  // wgmma warpgroups), and 3 x r2 at next_n 4 went from 165.4 to 143-146 us
  // (docs/perf/kernels.md#mqa-held-weights).
  constexpr bool kWRegs = HELD == 0 && (NW == 4 ? N <= 64 : N <= 128);
  float wreg[HELD > 0 ? HELD * (N / 4) : kWRegs ? N / 4 : 4];
  for (int gpos = g_begin; gpos < g_end; ++seg) {
    const Segment sg = segment_at(gpos);
    const int b = sg.b, tb = sg.tile_begin, te = sg.tile_end;
    gpos += te - tb;
    wg_barrier(1 + mw);  // the previous request's readers of weights and ctx are done
    for (int i = wtid; i < nchunks * N; i += 128) {
      const int chunk = i / N, cc = i % N;
      const int row_i = chunk * RPC + specprobe_kernels::mqa_q_col_row(kPaired, cc, H),
                h = specprobe_kernels::mqa_q_col_head(kPaired, cc, H);
      const float wv = row_i < n ? w[(static_cast<size_t>(b) * n + row_i) * H + h] : 0.f;
      wsm[(chunk * 4 + (cc % 8) / 2) * WS + 2 * (cc / 8) + (cc % 2)] =
          (relu_by_add<RPC, NW, HELD>(cc / 8) ? 0.5f : 1.f) * wv;  // see relu_term
    }
    for (int r = wtid; r < n; r += 128) ctx_s[r] = ctx_all[b * n + r];
    wg_barrier(1 + mw);
    if constexpr (HELD > 0) {
#pragma unroll
      for (int c = 0; c < HELD; ++c) {
        const float* wr = wsm + (c * 4 + tig) * WS;
#pragma unroll
        for (int i = 0; i < N / 4; i += 4) {
          const float4 t = *reinterpret_cast<const float4*>(wr + i);
          wreg[c * (N / 4) + i] = t.x;
          wreg[c * (N / 4) + i + 1] = t.y;
          wreg[c * (N / 4) + i + 2] = t.z;
          wreg[c * (N / 4) + i + 3] = t.w;
        }
      }
    }
    mbar_wait(q_full, seg & 1);
    for (int tile = tb; tile < te; ++tile) {
      mbar_wait(bar0 + 8 * ring.stage, ring.phase);
      const int t0 = 16 * wwarp + g;
      const float sc0 = scs[ring.stage * T + t0], sc1 = scs[ring.stage * T + t0 + 8];
      const int tok0 = tile * T + t0, tok1 = tok0 + 8;
      const uint32_t a_base = kv_addr + ring.stage * T * D;
      // One chunk's wgmma into acc (asynchronous: committed as its own group).
      auto issue = [&](float(&acc)[N / 2], int chunk) {
        const uint32_t da = spk::smem_desc_lo(a_base), db = spk::smem_desc_lo(qs_addr + chunk * N * D);
#pragma unroll
        for (int i = 0; i < N / 2; ++i) spk::reg_fence(acc[i]);
        spk::wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < KS; ++kk)
          spk::WgmmaE4m3<N>::mma(acc, spk::smem_desc_at<D>(da + 2 * kk), spk::smem_desc_at<D>(db + 2 * kk), kk);
        spk::wgmma_commit();
      };
      // The chunk's scores once its wgmma has completed: relu, weights, sum over heads, store.
      auto epilogue = [&](float(&acc)[N / 2], int chunk) {
#pragma unroll
        for (int i = 0; i < N / 2; ++i) spk::reg_fence(acc[i]);
        if (chunk == nchunks - 1) mbar_arrive(bar0 + 8 * (S + ring.stage));  // tile read: the producer may refill
        if constexpr (kWRegs) {
          if (nchunks > 1 || tile == tb) {
            const float* wr = wsm + (chunk * 4 + tig) * WS;
#pragma unroll
            for (int i = 0; i < N / 4; i += 4) {
              const float4 t = *reinterpret_cast<const float4*>(wr + i);
              wreg[i] = t.x;
              wreg[i + 1] = t.y;
              wreg[i + 2] = t.z;
              wreg[i + 3] = t.w;
            }
          }
        }
        const float* wrow = wsm + (chunk * 4 + tig) * WS;
        // relu(x) * w summed over this lane's heads (relu_term), four partial sums per output
        // so the dependent FFMA chains stay short; two in the held-weights kernels, whose FFMAs
        // wait on FMNMX rather than on each other (H100 / H200 next_n 3: 121.8-122.0 / 113.2-113.3
        // against 122.1-122.3 / 114.1-114.2 us with four; next_n 4: 142.8-143.0 against 143.3-143.4).
        constexpr int CH = HELD > 0 ? 2 : 4;
        constexpr int RP = RPC == 3 ? 4 : RPC;  // rows padded to a power of two for the quad
        float v[2 * RP];                        // v[2 * row + token]: this lane's partial sums
#pragma unroll
        for (int r = 0; r < RP; ++r) {
          float a[4] = {0.f, 0.f, 0.f, 0.f}, c[4] = {0.f, 0.f, 0.f, 0.f};
          if (r < RPC) {
#pragma unroll
            for (int jj = 0; jj < H / 8; jj += 2) {
              const int j = r * (H / 8) + jj;
              const int wo = HELD > 0 ? chunk * (N / 4) + 2 * j : 2 * j;  // chunk: a constant where HELD > 0
              const float4 wv = HELD > 0 || kWRegs ? make_float4(wreg[wo], wreg[wo + 1], wreg[wo + 2], wreg[wo + 3])
                                                   : *reinterpret_cast<const float4*>(wrow + 2 * j);  // groups j, j+1
              a[0 & (CH - 1)] = fmaf(relu_term<RPC, NW, HELD>(acc[4 * j + 0], j), wv.x, a[0 & (CH - 1)]);
              a[1 & (CH - 1)] = fmaf(relu_term<RPC, NW, HELD>(acc[4 * j + 1], j), wv.y, a[1 & (CH - 1)]);
              c[0 & (CH - 1)] = fmaf(relu_term<RPC, NW, HELD>(acc[4 * j + 2], j), wv.x, c[0 & (CH - 1)]);
              c[1 & (CH - 1)] = fmaf(relu_term<RPC, NW, HELD>(acc[4 * j + 3], j), wv.y, c[1 & (CH - 1)]);
              a[2 & (CH - 1)] = fmaf(relu_term<RPC, NW, HELD>(acc[4 * j + 4], j + 1), wv.z, a[2 & (CH - 1)]);
              a[3 & (CH - 1)] = fmaf(relu_term<RPC, NW, HELD>(acc[4 * j + 5], j + 1), wv.w, a[3 & (CH - 1)]);
              c[2 & (CH - 1)] = fmaf(relu_term<RPC, NW, HELD>(acc[4 * j + 6], j + 1), wv.z, c[2 & (CH - 1)]);
              c[3 & (CH - 1)] = fmaf(relu_term<RPC, NW, HELD>(acc[4 * j + 7], j + 1), wv.w, c[3 & (CH - 1)]);
            }
          }
          v[2 * r] = CH == 4 ? (a[0] + a[1]) + (a[2] + a[3]) : a[0] + a[1];
          v[2 * r + 1] = CH == 4 ? (c[0] + c[1]) + (c[2] + c[3]) : c[0] + c[1];
        }
        // Sum over the quad as a reduce-scatter: round 1 keeps the rows whose bit 0 is the lane's
        // bit 0, round 2 the half picked by lane bit 1, so each lane ends with its own outputs
        // (RP = 8: rows tig and tig + 4, both tokens; 4: row tig, both tokens; 2: row tig & 1,
        // token tig >> 1; 1: token tig & 1).
        const bool lb0 = tig & 1, lb1 = tig >> 1;
        if constexpr (kPaired) {  // lanes tig, tig ^ 1 hold one row (kernel_abi.hpp mqa_ws_paired_rows):
          // each keeps one token's sum and sends the other's
          const float t0 = v[0] + v[2], t1 = v[1] + v[3];
          const float out = (lb0 ? t1 : t0) + __shfl_xor_sync(0xffffffffu, lb0 ? t0 : t1, 1);
          const int row_i = chunk * RPC + int(lb1);
          const int tok = lb0 ? tok1 : tok0;
          if (row_i < n && tok < ctx_s[row_i])
            logits[static_cast<size_t>(b * n + row_i) * p.logits_stride + tok] = out * (lb0 ? sc1 : sc0);
          return;
        }
        float w1[RP];
        quad_round<2 * RP, RP == 1 ? 0 : 1>(v, w1, lb0, 1);
        constexpr int KO = RP == 1 ? 1 : RP / 2;
        float w2[KO];
        if constexpr (RP == 1)
          w2[0] = w1[0] + __shfl_xor_sync(0xffffffffu, w1[0], 2);
        else
          quad_round<RP, RP == 2 ? 0 : 1>(w1, w2, lb1, 2);
#pragma unroll
        for (int o = 0; o < KO; ++o) {
          const int row = RP == 1 ? 0 : RP == 2 ? int(lb0) : tig + 4 * (o >> 1);
          const bool second = RP == 1 ? lb0 : RP == 2 ? lb1 : (o & 1);  // token g + 8
          const int row_i = chunk * RPC + row;
          if (row < RPC && row_i < n && (RP != 1 || tig < 2)) {
            const int tok = second ? tok1 : tok0;
            if (tok < ctx_s[row_i])
              logits[static_cast<size_t>(b * n + row_i) * p.logits_stride + tok] = w2[o] * (second ? sc1 : sc0);
          }
        }
      };
      auto run_chunk = [&](int chunk) {
        float acc[N / 2];
        issue(acc, chunk);
        spk::wgmma_wait<0>();
        epilogue(acc, chunk);
      };
      if constexpr (HELD > 0) {  // unrolled: the held weights are indexed by a constant chunk
#pragma unroll
        for (int chunk = 0; chunk < HELD; ++chunk) run_chunk(chunk);
      } else {
        for (int chunk = 0; chunk < nchunks; ++chunk) run_chunk(chunk);
      }
      ring.advance(S);
    }
    mbar_arrive(q_empty);  // this request's q is no longer read
  }
#else
  (void)P;
  __trap();  // the host selects this kernel only on sm_90
#endif
}

}  // namespace

#define SPK_MQA_TMA(D, H, RPC)                                                      \
  extern "C" __global__ void __launch_bounds__(160, 2)                              \
      mqa_logits_tma_d##D##_h##H##_r##RPC(const __grid_constant__ MqaTmaParams p) { \
    mqa_logits_tma_body<D, H, RPC, 1>(p);                                           \
  }
#define SPK_MQA_TMA_D(D) \
  SPK_MQA_TMA(D, 16, 1)  \
  SPK_MQA_TMA(D, 16, 2)  \
  SPK_MQA_TMA(D, 16, 4)  \
  SPK_MQA_TMA(D, 16, 8)  \
  SPK_MQA_TMA(D, 32, 1)  \
  SPK_MQA_TMA(D, 32, 2)  \
  SPK_MQA_TMA(D, 32, 4)  \
  SPK_MQA_TMA(D, 32, 8)  \
  SPK_MQA_TMA(D, 64, 1)  \
  SPK_MQA_TMA(D, 64, 2)  \
  SPK_MQA_TMA(D, 64, 3)  \
  SPK_MQA_TMA(D, 64, 4)  \
  SPK_MQA_TMA(D, 128, 1) \
  SPK_MQA_TMA(D, 128, 2)
SPK_MQA_TMA_D(64)
SPK_MQA_TMA_D(128)

// One CTA per SM, NW math warpgroups (see kernel_abi.hpp). Only DeepSeek's indexer shape (64 heads
// of 128) and only the variants that won a measurement somewhere in next_n 1-6 on an H100
// (docs/perf/kernels.md#mqa-warp-specialized; probes/mqa_logits.cpp mqa_ws_variant picks among
// them); every other shape runs the two-CTA kernels above.
#define SPK_MQA_WS(NW, D, H, RPC)                                                        \
  extern "C" __global__ void __launch_bounds__(128 * (NW + 1), 1)                        \
      mqa_logits_ws##NW##_d##D##_h##H##_r##RPC(const __grid_constant__ MqaTmaParams p) { \
    mqa_logits_tma_body<D, H, RPC, NW>(p);                                               \
  }
SPK_MQA_WS(4, 128, 64, 1)
SPK_MQA_WS(4, 128, 64, 2)
SPK_MQA_WS(3, 128, 64, 3)
// Held weights (HELD chunks exactly, every chunk's weights in registers): mqa_logits_ws<NW>_d<D>_
// h<H>_r<RPC>_c<HELD>, producer registers PR. Three math warpgroups of 152 registers hold two
// chunks of N = 128 (64 accumulators + 64 weights); four (104) cannot. One chunk of N = 192 (96
// + 48) needs the producer lowered to 24 so the math warpgroups get 160: at 152 it spilled in
// the tile loop and ran 130-131 us at next_n 3 on an H100 (124.4 without held weights); at 160
// ptxas still stores a few registers (64 bytes) but it runs 122 (H100) and 113.3 (H200, against
// 120.0). The two-chunk kernel keeps 40: at 24 it ran 146.6 against 144.4
// (docs/perf/kernels.md#mqa-held-weights).
#define SPK_MQA_WS_HELD(NW, D, H, RPC, HELD, PR)                                                   \
  extern "C" __global__ void __launch_bounds__(128 * (NW + 1), 1)                                  \
      mqa_logits_ws##NW##_d##D##_h##H##_r##RPC##_c##HELD(const __grid_constant__ MqaTmaParams p) { \
    mqa_logits_tma_body<D, H, RPC, NW, HELD, PR>(p);                                               \
  }
SPK_MQA_WS_HELD(3, 128, 64, 2, 2, 40)
SPK_MQA_WS_HELD(3, 128, 64, 3, 1, 24)
