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
  constexpr int NT = HC / 8;   // n-tiles (8 heads each) per warp
  constexpr int KS = D / 32;   // k-steps of 32 e4m3
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
            spk::mma_f16_16816(acc[j], spk::e4m3x2_to_f16x2_div256(a[0], false),
                               spk::e4m3x2_to_f16x2_div256(a[1], false),
                               spk::e4m3x2_to_f16x2_div256(a[0], true),
                               spk::e4m3x2_to_f16x2_div256(a[1], true),
                               spk::e4m3x2_to_f16x2_div256(qf[j][kk][0], false),
                               spk::e4m3x2_to_f16x2_div256(qf[j][kk][0], true));
            spk::mma_f16_16816(acc[j], spk::e4m3x2_to_f16x2_div256(a[2], false),
                               spk::e4m3x2_to_f16x2_div256(a[3], false),
                               spk::e4m3x2_to_f16x2_div256(a[2], true),
                               spk::e4m3x2_to_f16x2_div256(a[3], true),
                               spk::e4m3x2_to_f16x2_div256(qf[j][kk][1], false),
                               spk::e4m3x2_to_f16x2_div256(qf[j][kk][1], true));
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
#define SPK_MQA(D, HC)                                                                       \
  extern "C" __global__ void __launch_bounds__(256, SPK_MQA_MINB(HC)) mqa_logits_d##D##_hc##HC(MqaLogitsParams p) { \
    mqa_logits_body<D, HC>(p);                                                               \
  }
SPK_MQA(64, 16)
SPK_MQA(64, 32)
SPK_MQA(64, 64)
SPK_MQA(128, 16)
SPK_MQA(128, 32)
SPK_MQA(128, 64)

// ---------------------------------------------------------------------------------------------
// sm_90a: wgmma kernel. One warpgroup per CTA. A 64-token tile (64 x D e4m3 + 64 fp32 scales)
// streams into shared memory through a kMqaWgStages-deep cp.async ring (block-table entries
// fetched one tile ahead, so no load waits on another), is converted once to f16 (exact, one
// cvt per pair) in the 128B-swizzled K-major layout, and is the wgmma A operand (M = 64 tokens).
// The B operand is q of RPC query rows x H heads (N = RPC * H <= 256), converted once per
// request and resident in shared memory; next_n > RPC runs ceil(next_n / RPC) chunks over the
// same tile, so KV is read from HBM once for every row. f16 rather than e4m3 wgmma: Hopper's
// e4m3 wgmma accumulates with ~14-bit precision (DeepSeek-V3 report, 3.3.2), which measured
// 1.6e-4 - 3.4e-4 max relative error here (DeepGEMM: 1.5e-4) against the probe's 1e-4; f16
// products are exact and accumulate in fp32. Epilogue in registers: each thread holds 2 tokens
// x N/4 columns, applies relu * weight, sums over heads, reduces a quad with shuffles, stores.
// Persistent mode (tiles_per_cta == 0): every CTA takes an equal share of all requests' tiles.
namespace {

using specprobe_kernels::kMqaWgStages;
using specprobe_kernels::kMqaWgTileTokens;

__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }

// 128B swizzle of a byte offset inside a K-major tile with 128-byte rows: 16-byte chunk bits
// [4, 7) XOR row bits [7, 10).
__device__ __forceinline__ uint32_t swz128(uint32_t off) { return off ^ (((off >> 7) & 7u) << 4); }

// K-major, 128B-swizzled operand: 8-row groups 1024 bytes apart.
__device__ __forceinline__ uint64_t smem_desc_sw128(uint32_t addr) {
  return (static_cast<uint64_t>((addr & 0x3FFFF) >> 4)) | (uint64_t{1} << 16) | (uint64_t{1024 >> 4} << 32) |
         (uint64_t{1} << 62);
}

// 16 e4m3 values -> 16 f16 values (exact: every e4m3 value is an f16 normal), as two 16-byte
// chunks; one cvt per pair.
__device__ __forceinline__ uint32_t e4m3x2_to_f16x2(uint32_t x16) {
  uint32_t d;
  asm("cvt.rn.f16x2.e4m3x2 %0, %1;\n" : "=r"(d) : "h"(static_cast<unsigned short>(x16)));
  return d;
}
__device__ __forceinline__ void e4m3x16_to_f16(const uint4 x, uint4& lo, uint4& hi) {
  lo = make_uint4(e4m3x2_to_f16x2(x.x & 0xFFFFu), e4m3x2_to_f16x2(x.x >> 16), e4m3x2_to_f16x2(x.y & 0xFFFFu),
                  e4m3x2_to_f16x2(x.y >> 16));
  hi = make_uint4(e4m3x2_to_f16x2(x.z & 0xFFFFu), e4m3x2_to_f16x2(x.z >> 16), e4m3x2_to_f16x2(x.w & 0xFFFFu),
                  e4m3x2_to_f16x2(x.w >> 16));
}

template <int D, int H, int RPC>
__device__ __forceinline__ void mqa_logits_wg_body(const MqaLogitsParams& p) {
#ifdef SPK_HAS_WGMMA
  constexpr int T = kMqaWgTileTokens;  // 64
  constexpr int S = kMqaWgStages;
  constexpr int N = RPC * H;
  constexpr int WS = N / 4 + 4;  // per-lane weight row (floats), padded against bank conflicts
  constexpr int KB = D / 64;     // 64-element (128-byte) K blocks of an f16 row
  constexpr int KS = D / 16;     // wgmma k-steps
  constexpr int CPR = D / 16;    // 16-byte e4m3 chunks per token row
  constexpr int NR = T * CPR / 128;  // chunks (token rows) each thread copies per tile
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  const uint32_t raw_addr = spk::smem_addr(smem_raw);
  unsigned char* smem = smem_raw + (((raw_addr + 1023u) & ~1023u) - raw_addr);

  const int n = p.next_n;
  const int nchunks = (n + RPC - 1) / RPC;
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int g = lane >> 2, tig = lane & 3;

  unsigned char* kh = smem;                                       // [KB][T][128 B] f16, swizzled
  unsigned char* qh = kh + T * D * 2;                             // [nchunks][KB][N][128 B] f16, swizzled
  unsigned char* kvs = qh + nchunks * N * D * 2;                  // [S][T][D] e4m3
  float* scs = reinterpret_cast<float*>(kvs + S * T * D);         // [S][T]
  float* wsm = scs + S * T;                                       // [nchunks][4][WS]
  int* ctx_s = reinterpret_cast<int*>(wsm + nchunks * 4 * WS);    // [n]
  int* prefix = ctx_s + n;                                        // [batch + 1] (persistent mode)

  const int* ctx_all = reinterpret_cast<const int*>(p.context_lens);
  auto request_tiles = [&](int b) {
    int m = 0;
    for (int r = 0; r < n; ++r) m = max(m, ctx_all[b * n + r]);
    return (m + T - 1) / T;
  };
  // Work of this CTA: tiles [g_begin, g_end) of the sequence of all requests' tiles.
  int g_begin, g_end;
  if (p.tiles_per_cta > 0) {
    const int nt = request_tiles(blockIdx.y);
    g_begin = min(static_cast<int>(blockIdx.x) * p.tiles_per_cta, nt);
    g_end = min(g_begin + p.tiles_per_cta, nt);
    if (g_begin >= g_end) return;
  } else {
    // Block-wide exclusive scan of tiles per request (128 threads, a few requests each).
    const int per = (p.batch + 127) / 128;
    int local = 0;
    for (int i = 0; i < per; ++i) {
      const int b = tid * per + i;
      if (b < p.batch) local += request_tiles(b);
    }
    int incl = local;
#pragma unroll
    for (int off = 1; off < 32; off <<= 1) {
      const int v = __shfl_up_sync(0xffffffffu, incl, off);
      if (lane >= off) incl += v;
    }
    __shared__ int warp_sums[4];
    if (lane == 31) warp_sums[warp] = incl;
    __syncthreads();
    int run = incl - local;
    for (int w = 0; w < warp; ++w) run += warp_sums[w];
    for (int i = 0; i < per; ++i) {
      const int b = tid * per + i;
      if (b < p.batch) {
        prefix[b] = run;
        run += request_tiles(b);
      }
    }
    const int total = warp_sums[0] + warp_sums[1] + warp_sums[2] + warp_sums[3];
    if (tid == 0) prefix[p.batch] = total;
    __syncthreads();
    g_begin = static_cast<int>(static_cast<long long>(total) * blockIdx.x / gridDim.x);
    g_end = static_cast<int>(static_cast<long long>(total) * (blockIdx.x + 1) / gridDim.x);
    if (g_begin >= g_end) return;
  }

  const uint8_t* kv = reinterpret_cast<const uint8_t*>(p.kv);
  const int bkv = p.block_kv;
  const size_t block_bytes = static_cast<size_t>(bkv) * (D + 4);
  const uint32_t kh_addr = spk::smem_addr(kh), qh_addr = spk::smem_addr(qh);
  float* logits = reinterpret_cast<float*>(p.logits);
  const int col = tid % CPR;  // this thread's 16-byte chunk of each token row it copies

  for (int gpos = g_begin; gpos < g_end;) {
    // Segment: one request's run of tiles inside [g_begin, g_end).
    int b;
    if (p.tiles_per_cta > 0) {
      b = blockIdx.y;
    } else {
      int lo = 0, hi = p.batch - 1;  // last b with prefix[b] <= gpos
      while (lo < hi) {
        const int mid = (lo + hi + 1) >> 1;
        if (prefix[mid] <= gpos) lo = mid;
        else hi = mid - 1;
      }
      b = lo;
    }
    const int base_tile = p.tiles_per_cta > 0 ? 0 : prefix[b];
    const int tile_begin = gpos - base_tile;
    const int tile_end = min(request_tiles(b), tile_begin + (g_end - gpos));
    gpos += tile_end - tile_begin;
    const int* ctx_lens = ctx_all + b * n;
    int ctx_max = 0;
    for (int r = 0; r < n; ++r) ctx_max = max(ctx_max, ctx_lens[r]);

    __syncthreads();  // the previous segment's readers of q, weights and ctx are done
    // q of request b (all rows, zero-padded to nchunks * RPC rows) -> f16, and its weights.
    {
      const uint8_t* q = reinterpret_cast<const uint8_t*>(p.q);
      const float* w = reinterpret_cast<const float*>(p.weights);
      for (int c = tid; c < nchunks * N * CPR; c += 128) {
        const int rq = c / CPR, qc = c % CPR;
        const int chunk = rq / N, rr = rq % N;
        const int row_i = chunk * RPC + rr / H, h = rr % H;
        uint4 x = make_uint4(0, 0, 0, 0);
        if (row_i < n) x = *reinterpret_cast<const uint4*>(q + ((static_cast<size_t>(b) * n + row_i) * H + h) * D + qc * 16);
        uint4 lo, hi;
        e4m3x16_to_f16(x, lo, hi);
        unsigned char* base = qh + (chunk * KB + qc / 4) * N * 128;
        *reinterpret_cast<uint4*>(base + swz128(rr * 128 + (qc % 4) * 32)) = lo;
        *reinterpret_cast<uint4*>(base + swz128(rr * 128 + (qc % 4) * 32 + 16)) = hi;
      }
      for (int i = tid; i < nchunks * N; i += 128) {
        const int chunk = i / N, cc = i % N;
        const int row_i = chunk * RPC + cc / H, h = cc % H;
        const float wv = row_i < n ? w[(static_cast<size_t>(b) * n + row_i) * H + h] : 0.f;
        wsm[(chunk * 4 + (cc % 8) / 2) * WS + 2 * (cc / 8) + (cc % 2)] = wv;
      }
      for (int r = tid; r < n; r += 128) ctx_s[r] = ctx_lens[r];
    }

    const int* btab = reinterpret_cast<const int*>(p.block_table) + static_cast<size_t>(b) * p.block_table_stride;
    // Block of each token row this thread copies (-1 past the context), fetched a tile ahead.
    int nb[NR], nbs = -1;
    auto fetch_blocks = [&](int tile) {
#pragma unroll
      for (int i = 0; i < NR; ++i) {
        const int tok = tile * T + tid / CPR + i * (128 / CPR);
        nb[i] = tok < ctx_max ? btab[tok / bkv] : -1;
      }
      if (tid < T / 4) {
        const int tok = tile * T + tid * 4;
        nbs = tok < ctx_max ? btab[tok / bkv] : -1;
      }
    };
    auto load_tile = [&](int tile, int stage) {
      unsigned char* st = kvs + stage * T * D;
#pragma unroll
      for (int i = 0; i < NR; ++i) {
        const int r = tid / CPR + i * (128 / CPR);
        const int tok = tile * T + r;
        const uint8_t* src = nb[i] >= 0 ? kv + static_cast<size_t>(nb[i]) * block_bytes + static_cast<size_t>(tok % bkv) * D + col * 16 : kv;
        spk::cp_async16(st + r * D + col * 16, src, nb[i] >= 0);
      }
      if (tid < T / 4) {  // 4 scales per 16 bytes; block_kv % 4 == 0 keeps them in one block
        const int tok = tile * T + tid * 4;
        const uint8_t* src = nbs >= 0 ? kv + static_cast<size_t>(nbs) * block_bytes + static_cast<size_t>(bkv) * D + (tok % bkv) * 4 : kv;
        spk::cp_async16(scs + stage * T + tid * 4, src, nbs >= 0);
      }
    };

#pragma unroll
    for (int s = 0; s < S - 1; ++s) {
      if (tile_begin + s < tile_end) {
        fetch_blocks(tile_begin + s);
        load_tile(tile_begin + s, s);
      }
      spk::cp_async_commit();
    }
    if (tile_begin + S - 1 < tile_end) fetch_blocks(tile_begin + S - 1);

    for (int tile = tile_begin; tile < tile_end; ++tile) {
      const int it = tile - tile_begin;
      const int st = it % S;
      spk::cp_async_wait<S - 2>();
      __syncthreads();  // stage st landed; every warp is done with the previous tile's f16 copy
      if (tile + S - 1 < tile_end) load_tile(tile + S - 1, (it + S - 1) % S);
      spk::cp_async_commit();
      if (tile + S < tile_end) fetch_blocks(tile + S);
      // e4m3 stage -> f16 swizzled tile.
      {
        const unsigned char* raw = kvs + st * T * D;
#pragma unroll
        for (int i = 0; i < NR; ++i) {
          const int r = tid / CPR + i * (128 / CPR);
          uint4 lo, hi;
          e4m3x16_to_f16(*reinterpret_cast<const uint4*>(raw + r * D + col * 16), lo, hi);
          unsigned char* base = kh + (col / 4) * T * 128;
          *reinterpret_cast<uint4*>(base + swz128(r * 128 + (col % 4) * 32)) = lo;
          *reinterpret_cast<uint4*>(base + swz128(r * 128 + (col % 4) * 32 + 16)) = hi;
        }
      }
      fence_proxy_async();  // generic-proxy smem writes, read next by wgmma (async proxy)
      __syncthreads();

      const int t0 = 16 * warp + g;
      const float sc0 = scs[st * T + t0], sc1 = scs[st * T + t0 + 8];
      const int tok0 = tile * T + t0, tok1 = tok0 + 8;
      for (int chunk = 0; chunk < nchunks; ++chunk) {
        float acc[N / 2];
        const uint32_t qb = qh_addr + chunk * KB * N * 128;
#pragma unroll
        for (int i = 0; i < N / 2; ++i) spk::reg_fence(acc[i]);
        spk::wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < KS; ++kk) {
          const uint64_t da = smem_desc_sw128(kh_addr + (kk / 4) * T * 128 + (kk % 4) * 32);
          const uint64_t db = smem_desc_sw128(qb + (kk / 4) * N * 128 + (kk % 4) * 32);
          spk::WgmmaF16<N>::mma(acc, da, db, kk);
        }
        spk::wgmma_commit();
        spk::wgmma_wait<0>();
#pragma unroll
        for (int i = 0; i < N / 2; ++i) spk::reg_fence(acc[i]);
        const float* wrow = wsm + (chunk * 4 + tig) * WS;
#pragma unroll
        for (int r = 0; r < RPC; ++r) {
          float s0 = 0.f, s1 = 0.f;
#pragma unroll
          for (int jj = 0; jj < H / 8; jj += 2) {
            const int j = r * (H / 8) + jj;
            const float4 wv = *reinterpret_cast<const float4*>(wrow + 2 * j);  // groups j, j+1
            s0 = fmaf(fmaxf(acc[4 * j + 0], 0.f), wv.x, s0);
            s0 = fmaf(fmaxf(acc[4 * j + 1], 0.f), wv.y, s0);
            s1 = fmaf(fmaxf(acc[4 * j + 2], 0.f), wv.x, s1);
            s1 = fmaf(fmaxf(acc[4 * j + 3], 0.f), wv.y, s1);
            s0 = fmaf(fmaxf(acc[4 * j + 4], 0.f), wv.z, s0);
            s0 = fmaf(fmaxf(acc[4 * j + 5], 0.f), wv.w, s0);
            s1 = fmaf(fmaxf(acc[4 * j + 6], 0.f), wv.z, s1);
            s1 = fmaf(fmaxf(acc[4 * j + 7], 0.f), wv.w, s1);
          }
          s0 += __shfl_xor_sync(0xffffffffu, s0, 1);
          s1 += __shfl_xor_sync(0xffffffffu, s1, 1);
          s0 += __shfl_xor_sync(0xffffffffu, s0, 2);
          s1 += __shfl_xor_sync(0xffffffffu, s1, 2);
          const int row_i = chunk * RPC + r;
          if (tig == (r & 3) && row_i < n) {
            const int ctx = ctx_s[row_i];
            float* out = logits + static_cast<size_t>(b * n + row_i) * p.logits_stride;
            if (tok0 < ctx) out[tok0] = s0 * sc0;
            if (tok1 < ctx) out[tok1] = s1 * sc1;
          }
        }
      }
    }
    spk::cp_async_wait<0>();
  }
#else
  (void)p;
  __trap();  // the host selects this kernel only on sm_90
#endif
}

}  // namespace

#define SPK_MQA_WG(D, H, RPC)                                                                  \
  extern "C" __global__ void __launch_bounds__(128, 1) mqa_logits_wg_d##D##_h##H##_r##RPC(MqaLogitsParams p) { \
    mqa_logits_wg_body<D, H, RPC>(p);                                                           \
  }
#define SPK_MQA_WG_D(D)   \
  SPK_MQA_WG(D, 16, 1)    \
  SPK_MQA_WG(D, 16, 2)    \
  SPK_MQA_WG(D, 16, 4)    \
  SPK_MQA_WG(D, 16, 8)    \
  SPK_MQA_WG(D, 32, 1)    \
  SPK_MQA_WG(D, 32, 2)    \
  SPK_MQA_WG(D, 32, 4)    \
  SPK_MQA_WG(D, 32, 8)    \
  SPK_MQA_WG(D, 64, 1)    \
  SPK_MQA_WG(D, 64, 2)    \
  SPK_MQA_WG(D, 64, 3)    \
  SPK_MQA_WG(D, 64, 4)    \
  SPK_MQA_WG(D, 128, 1)   \
  SPK_MQA_WG(D, 128, 2)
SPK_MQA_WG_D(64)
SPK_MQA_WG_D(128)
