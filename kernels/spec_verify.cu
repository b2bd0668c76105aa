// Spec-verify attention over a paged KV cache: the num_q = k+1 query rows of each request attend
// causally inside the verify window and fully to the cached prefix (row j sits at position
// seq_len - num_q + j). Any GQA ratio (rows = num_q * GQA, padded to 16, not to a power of two),
// head_dim 64/128/256, KV bf16 or e4m3 with per-tensor scales, any block size.
//
// Design (memory-bound decode shape): a CTA owns (split, request, kv head, row group) and streams
// its token range in tiles (spec_verify_tile_tokens: 64 or 32 tokens) through a 2-3 stage cp.async
// ring of 16-byte copies, or, in the _tma variant (sm_90+, bf16 KV), a 2-stage ring that warp 0
// fills with bulk tensor copies of one block's rows per box (SpecVerifyTmaParams): on an H200 the
// copy engine reached 71% of the HBM roofline where 16-byte cp.async from every thread stopped at
// 53-60% (docs/perf/kernels.md#sv-tma); every query row of the kv head's group reuses each K/V
// tile. Warp w owns m-tile w % MT (16 rows) and a token slice of every tile (flash-decoding inside
// the CTA): S = Q K^T and O += P V on bf16 tensor cores with P kept in registers, online softmax in
// fp32 (log2 domain) per warp with a lazy rescale (O is rescaled only when the running max moves by
// more than kSpecVerifyLazySlack), so a tile costs one barrier. The warps' (m, l, O) are merged
// through shared memory at the end. fp8 tiles are dequantised to bf16 in smem once per tile.
// Requests longer than one split write O/l and lse per split and spec_verify_combine merges them.
// Deterministic: fixed reduction order, no atomics, so graph replays are bit-identical.
#include "common.cuh"

namespace {

using specprobe_kernels::SpecVerifyCombineParams;
using specprobe_kernels::SpecVerifyParams;
constexpr int kThreads = specprobe_kernels::kSpecVerifyThreads;
constexpr float kLog2e = 1.4426950408889634f;

__device__ __forceinline__ uint32_t pack_bf16(float lo, float hi) {
  __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<uint32_t*>(&v);
}

// Copy-engine helpers of the _tma variant (sm_90+; elsewhere the variant's kernels are empty).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define SPK_SV_TMA 1
__device__ __forceinline__ void sv_mbar_init(uint32_t bar) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(bar) : "memory");
}
__device__ __forceinline__ void sv_expect_tx(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
// Waits for the phase of the given parity; the suspend-time hint lets the warp sleep instead of
// polling (as mqa_logits.cu's mbar_wait).
__device__ __forceinline__ void sv_mbar_wait(uint32_t bar, uint32_t parity) {
  uint32_t done;
  do {
    asm volatile(
        "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2, %3;\nselp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(bar), "r"(parity), "r"(0x989680u)
        : "memory");
  } while (!done);
}
__device__ __forceinline__ void sv_tma_4d(uint32_t dst, const void* map, uint32_t bar, int c0, int c1, int c2, int c3) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5}], "
      "[%6];\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(bar)
      : "memory");
}
#else
#define SPK_SV_TMA 0
#endif

// TMA: the bf16 copy-engine variant (SpecVerifyTmaParams); tp is null otherwise.
template <int D, bool FP8, int MR, bool TMA = false>
__device__ __forceinline__ void spec_verify_body(const SpecVerifyParams& p,
                                                 const specprobe_kernels::SpecVerifyTmaParams* tp = nullptr) {
  static_assert(!(TMA && FP8), "the copy-engine variant is bf16 only");
  constexpr int TN = specprobe_kernels::spec_verify_tile_tokens(D, MR);
  constexpr int RB = D + 8;                                        // bf16 row stride (elements)
  constexpr int MT = MR / 16;                                      // m-tiles
  constexpr int WT = (4 / MT) < (TN / 16) ? (4 / MT) : (TN / 16);  // warps sharing an m-tile's tokens
  constexpr int TPW = TN / WT;                                     // tokens per warp per tile
  constexpr int NTS = TPW / 8;                                     // S n-tiles per warp
  constexpr int NTO = D / 8;                                       // O n-tiles (full head_dim per warp)
  extern __shared__ __align__(1024) unsigned char sv_smem[];
  unsigned char* smem = sv_smem;
  const int S = p.stages;
  constexpr int merge_bytes = 4 * 16 * D * 4;
  __nv_bfloat16* qs;
  unsigned char* ring;
  float* stat_m;
  if constexpr (TMA) {
    // Ring first (1024-aligned for the 128-byte swizzle): stage s = K then V, each [D / 64 halves]
    // [TN tokens][128 bytes], 16-byte chunk c of token row t stored at chunk c ^ (t % 8).
    // = spec_verify_tma_smem_bytes (kernel_abi.hpp)
    const int ring_bytes = S * 2 * TN * D * 2;
    ring = smem;
    qs = reinterpret_cast<__nv_bfloat16*>(smem + (ring_bytes > merge_bytes ? ring_bytes : merge_bytes));
    stat_m = reinterpret_cast<float*>(qs + MR * RB);
  } else {
    qs = reinterpret_cast<__nv_bfloat16*>(smem);
    ring = smem + MR * RB * 2;
    // bf16: K/V stage s at ring + s * 2 * TN * RB * 2 (K then V). fp8: raw K/V stage s at
    // ring + 2 * TN * RB * 2 + s * 2 * TN * D, dequantised into the single bf16 K/V pair at ring.
    // = spec_verify_ring_bytes / spec_verify_merge_bytes (kernel_abi.hpp)
    const int ring_bytes = FP8 ? 2 * TN * RB * 2 + S * 2 * TN * D : S * 2 * TN * RB * 2;
    stat_m = reinterpret_cast<float*>(ring + (ring_bytes > merge_bytes ? ring_bytes : merge_bytes));
  }
  float* stat_l = stat_m + 4 * MR;
  const uint32_t bar0 = spk::smem_addr(stat_l + 4 * MR);  // TMA: one "full" mbarrier per stage

  const int b = blockIdx.y / p.heads_kv;
  const int kvh = blockIdx.y % p.heads_kv;
  const int gqa = p.heads_q / p.heads_kv;
  const int rows_total = p.num_q * gqa;
  const int row0 = blockIdx.z * MR;
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int g = lane >> 2, tig = lane & 3;
  const int mt = warp % MT, ts = warp / MT;
  const bool active = ts < WT;

  const int seq_len = reinterpret_cast<const int*>(p.seq_lens)[b];
  const int num_tiles = (seq_len + TN - 1) / TN;
  const int nsplit = (num_tiles + p.tiles_per_split - 1) / p.tiles_per_split;
  const int split = blockIdx.x;
  if (split > 0 && split >= nsplit) return;  // split 0 always writes (zeros if empty)
  const int tile_begin = split * p.tiles_per_split;
  const int tile_end = min(num_tiles, tile_begin + p.tiles_per_split);

  // Q rows -> smem (padded rows zero).
  const __nv_bfloat16* q = reinterpret_cast<const __nv_bfloat16*>(p.q);
  for (int c = tid; c < MR * (D / 8); c += kThreads) {
    const int r = c / (D / 8), col = c % (D / 8);
    const int rg = row0 + r;
    uint4 v = make_uint4(0, 0, 0, 0);
    if (rg < rows_total) {
      const int j = rg / gqa, hq = kvh * gqa + rg % gqa;
      v = *reinterpret_cast<const uint4*>(q + ((static_cast<size_t>(b) * p.num_q + j) * p.heads_q + hq) * D + col * 8);
    }
    *reinterpret_cast<uint4*>(qs + r * RB + col * 8) = v;
  }
  // This thread's two rows (g, g + 8 of its m-tile): causal limit.
  int pos[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int rg = row0 + mt * 16 + g + h * 8;
    pos[h] = rg < rows_total ? seq_len - p.num_q + rg / gqa : -1;
  }

  const int* btab = reinterpret_cast<const int*>(p.block_table) + static_cast<size_t>(b) * p.block_table_stride;
  constexpr int EB = FP8 ? 1 : 2;  // bytes per cached element
  const uint8_t* kc = reinterpret_cast<const uint8_t*>(p.k_cache);
  const uint8_t* vc = reinterpret_cast<const uint8_t*>(p.v_cache);
  auto load_tile = [&](int tile, int stage) {
#if SPK_SV_TMA
    if constexpr (TMA) {
      // Warp 0: box j of the tile (box_tokens tokens of one block) on lane j, each half of the
      // row for K and V; boxes wholly past the context are not read (their rows are zeroed
      // after the wait). The expected bytes are armed before any copy is issued.
      if (warp != 0) return;
      const int bt = tp->box_tokens;
      const int boxes = (min(TN, seq_len - tile * TN) + bt - 1) / bt;
      const uint32_t bar = bar0 + 8 * stage;
      if (lane == 0) sv_expect_tx(bar, static_cast<uint32_t>(boxes * bt * D * 2 * 2));
      __syncwarp();
      const uint32_t kdst = spk::smem_addr(ring + stage * 2 * TN * D * 2), vdst = kdst + TN * D * 2;
      for (int j = lane; j < boxes; j += 32) {
        const int tok = tile * TN + j * bt;
        const int blk = btab[tok / p.block_size];
        const int in_blk = tok % p.block_size;
#pragma unroll
        for (int h = 0; h < D / 64; ++h) {
          const uint32_t off = h * TN * 128 + j * bt * 128;
          sv_tma_4d(kdst + off, tp->k_map, bar, h * 128, kvh, in_blk, blk);
          sv_tma_4d(vdst + off, tp->v_map, bar, h * 128, kvh, in_blk, blk);
        }
      }
      return;
    }
#endif
    constexpr int kChunks = D * EB / 16;  // 16-byte chunks per token row
    for (int c = tid; c < TN * kChunks; c += kThreads) {
      const int r = c / kChunks, col = c % kChunks;
      const int tok = tile * TN + r;
      const bool valid = tok < seq_len;
      size_t off = 0;
      if (valid) {
        const int blk = btab[tok / p.block_size];
        const size_t slot = static_cast<size_t>(blk) * p.block_size + tok % p.block_size;
        off = ((slot * p.heads_kv + kvh) * D) * EB + col * 16;
      }
      unsigned char* dk;
      unsigned char* dv;
      if constexpr (FP8) {
        unsigned char* st = ring + 2 * TN * RB * 2 + stage * 2 * TN * D;
        dk = st + r * D + col * 16;
        dv = st + TN * D + r * D + col * 16;
      } else {
        unsigned char* st = ring + stage * 2 * TN * RB * 2;
        dk = st + (r * RB + col * 8) * 2;
        dv = st + ((TN + r) * RB + col * 8) * 2;
      }
      spk::cp_async16(dk, kc + off, valid);
      spk::cp_async16(dv, vc + off, valid);
    }
  };

  float o[NTO][4];
#pragma unroll
  for (int n = 0; n < NTO; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.f;
  float m_run[2] = {-INFINITY, -INFINITY}, l_run[2] = {0.f, 0.f};

  const float qk_scale = p.sm_scale * kLog2e * (FP8 ? p.k_scale : 1.f);
#if SPK_SV_TMA
  if constexpr (TMA) {
    if (tid == 0) {
      for (int s = 0; s < S; ++s) sv_mbar_init(bar0 + 8 * s);
      asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();
  }
#endif
  for (int s = 0; s < S - 1; ++s) {
    if (tile_begin + s < tile_end) load_tile(tile_begin + s, s);
    spk::cp_async_commit();
  }

  for (int tile = tile_begin; tile < tile_end; ++tile) {
    const int it = tile - tile_begin;
    const int stage = it % S;
#if SPK_SV_TMA
    if constexpr (TMA) {
      sv_mbar_wait(bar0 + 8 * stage, static_cast<uint32_t>((it / S) & 1));
      // The last tile's rows past the context were not loaded (or hold other tokens): zero
      // them, as cp.async's zero-fill does, so P V never meets a non-finite V.
      const int valid_n = seq_len - tile * TN;
      if (valid_n < TN) {
        unsigned char* st = ring + stage * 2 * TN * D * 2;
        const int chunks = (TN - valid_n) * 8;  // 16-byte chunks per half
        for (int c = tid; c < 2 * (D / 64) * chunks; c += kThreads) {
          const int part = c / chunks, rc = c % chunks;  // part = (K | V) x half
          *reinterpret_cast<uint4*>(st + part * TN * 128 + (valid_n + rc / 8) * 128 + (rc % 8) * 16) =
              make_uint4(0, 0, 0, 0);
        }
      }
    }
#endif
    if constexpr (!TMA) {
      if (S == 3)
        spk::cp_async_wait<1>();
      else
        spk::cp_async_wait<0>();
    }
    __syncthreads();
    if (tile + S - 1 < tile_end) load_tile(tile + S - 1, (it + S - 1) % S);
    spk::cp_async_commit();
    const __nv_bfloat16* kt;
    const __nv_bfloat16* vt;
    if constexpr (FP8) {
      // Dequantise the stage into the bf16 tiles (K scale folded into qk_scale).
      const uint8_t* rk = ring + 2 * TN * RB * 2 + stage * 2 * TN * D;
      const uint8_t* rv = rk + TN * D;
      __nv_bfloat16* ks = reinterpret_cast<__nv_bfloat16*>(ring);
      __nv_bfloat16* vs = ks + TN * RB;
      for (int c = tid; c < 2 * TN * D / 8; c += kThreads) {
        const int which = c / (TN * D / 8);
        const int e = (c % (TN * D / 8)) * 8;
        const int r = e / D, col = e % D;
        const uint2 x = *reinterpret_cast<const uint2*>((which ? rv : rk) + r * D + col);
        const float sc = which ? p.v_scale : 1.f;
        const float2 a0 = spk::e4m3x2_to_float2(x.x, false), a1 = spk::e4m3x2_to_float2(x.x, true);
        const float2 a2 = spk::e4m3x2_to_float2(x.y, false), a3 = spk::e4m3x2_to_float2(x.y, true);
        uint4 v;
        v.x = pack_bf16(a0.x * sc, a0.y * sc);
        v.y = pack_bf16(a1.x * sc, a1.y * sc);
        v.z = pack_bf16(a2.x * sc, a2.y * sc);
        v.w = pack_bf16(a3.x * sc, a3.y * sc);
        *reinterpret_cast<uint4*>((which ? vs : ks) + r * RB + col) = v;
      }
      __syncthreads();
      kt = ks;
      vt = vs;
    } else if constexpr (TMA) {
      kt = reinterpret_cast<const __nv_bfloat16*>(ring + stage * 2 * TN * D * 2);
      vt = kt + TN * D;
    } else {
      kt = reinterpret_cast<const __nv_bfloat16*>(ring + stage * 2 * TN * RB * 2);
      vt = kt + TN * RB;
    }
    // Element (tok, e) of a K or V tile: padded rows, or the copy engine's swizzled halves.
    auto at = [&](const __nv_bfloat16* base, int tok, int e) -> const __nv_bfloat16* {
      if constexpr (TMA)
        return reinterpret_cast<const __nv_bfloat16*>(reinterpret_cast<const unsigned char*>(base) +
                                                      specprobe_kernels::spec_verify_tma_offset(TN, tok, e));
      else
        return base + tok * RB + e;
    };
    if (!active) continue;
    const int tok0 = ts * TPW;  // this warp's first token in the tile

    // S = Q K^T for this warp's TPW tokens and its 16 rows.
    float sacc[NTS][4];
#pragma unroll
    for (int n = 0; n < NTS; ++n) sacc[n][0] = sacc[n][1] = sacc[n][2] = sacc[n][3] = 0.f;
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
      uint32_t a[4];
      spk::ldmatrix_x4(a, qs + (mt * 16 + (lane & 15)) * RB + kk * 16 + (lane >> 4) * 8);
#pragma unroll
      for (int n = 0; n < NTS; n += 2) {
        uint32_t bb[4];
        const int tok = tok0 + n * 8 + (lane & 7) + ((lane >> 4) & 1) * 8;
        spk::ldmatrix_x4(bb, at(kt, tok, kk * 16 + ((lane >> 3) & 1) * 8));
        spk::mma_bf16_16816(sacc[n], a, bb[0], bb[1]);
        spk::mma_bf16_16816(sacc[n + 1], a, bb[2], bb[3]);
      }
    }
    // Online softmax in registers; rows g (elements 0, 1) and g + 8 (elements 2, 3). A tile
    // wholly before the verify window (every row's causal limit is at least seq_len - num_q)
    // needs no mask: that is every tile but the last one or two.
    float mx[2] = {-INFINITY, -INFINITY};
    const bool masked = tile * TN + TN - 1 > seq_len - p.num_q;
#pragma unroll
    for (int n = 0; n < NTS; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int tok = tile * TN + tok0 + n * 8 + tig * 2 + (e & 1);
        const float v = !masked || tok <= pos[e >> 1] ? sacc[n][e] * qk_scale : -INFINITY;
        sacc[n][e] = v;
        mx[e >> 1] = fmaxf(mx[e >> 1], v);
      }
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 1));
      mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 2));
    }
    // Lazy rescale: m_run, the base of P, l and O, moves (and O is rescaled) only when a row of the
    // warp's tile exceeds it by more than kSpecVerifyLazySlack (log2 units), so P stays below
    // 2^slack and most tiles skip the 4 * NTO multiplies of O
    // (docs/perf/kernels.md#sv-lazy-rescale).
    constexpr float slack = specprobe_kernels::kSpecVerifyLazySlack;
    float base[2];
    if (__any_sync(0xffffffffu, mx[0] > m_run[0] + slack || mx[1] > m_run[1] + slack)) {
      float alpha[2];
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const float m_new = fmaxf(m_run[h], mx[h]);
        base[h] = m_new == -INFINITY ? 0.f : m_new;
        alpha[h] = exp2f(m_run[h] - base[h]);  // m_run = -inf -> 0
        m_run[h] = m_new;
        l_run[h] *= alpha[h];
      }
#pragma unroll
      for (int n = 0; n < NTO; ++n) {
        o[n][0] *= alpha[0];
        o[n][1] *= alpha[0];
        o[n][2] *= alpha[1];
        o[n][3] *= alpha[1];
      }
    } else {
#pragma unroll
      for (int h = 0; h < 2; ++h) base[h] = m_run[h] == -INFINITY ? 0.f : m_run[h];
    }
    uint32_t pf[NTS][2];  // bf16 P, packed as the next mma's A fragments
#pragma unroll
    for (int n = 0; n < NTS; ++n) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const __nv_bfloat162 pb =
            __floats2bfloat162_rn(exp2f(sacc[n][2 * h] - base[h]), exp2f(sacc[n][2 * h + 1] - base[h]));
        const float2 pr = __bfloat1622float2(pb);
        l_run[h] += pr.x + pr.y;  // l sums what P V multiplies
        pf[n][h] = *reinterpret_cast<const uint32_t*>(&pb);
      }
    }
    // O += P V over this warp's tokens, all of head_dim.
#pragma unroll
    for (int kk = 0; kk < TPW / 16; ++kk) {
      const uint32_t a[4] = {pf[2 * kk][0], pf[2 * kk][1], pf[2 * kk + 1][0], pf[2 * kk + 1][1]};
#pragma unroll
      for (int n = 0; n < NTO; n += 2) {
        uint32_t bb[4];
        const int tok = tok0 + kk * 16 + (lane & 7) + ((lane >> 3) & 1) * 8;
        const int col = n * 8 + (lane >> 4) * 8;
        spk::ldmatrix_x4_trans(bb, at(vt, tok, col));
        spk::mma_bf16_16816(o[n], a, bb[0], bb[1]);
        spk::mma_bf16_16816(o[n + 1], a, bb[2], bb[3]);
      }
    }
  }
  if constexpr (!TMA) spk::cp_async_wait<0>();
  __syncthreads();

  // Merge the WT token slices of each m-tile: (m, l) per row and unnormalised O through smem.
  float* ored = reinterpret_cast<float*>(ring);  // [WT][MR][D]
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    l_run[h] += __shfl_xor_sync(0xffffffffu, l_run[h], 1);
    l_run[h] += __shfl_xor_sync(0xffffffffu, l_run[h], 2);
  }
  if (active) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = mt * 16 + g + h * 8;
      if (tig == 0) {
        stat_m[ts * MR + r] = m_run[h];
        stat_l[ts * MR + r] = l_run[h];
      }
#pragma unroll
      for (int n = 0; n < NTO; ++n)
        *reinterpret_cast<float2*>(ored + (ts * MR + r) * D + n * 8 + tig * 2) =
            make_float2(o[n][2 * h], o[n][2 * h + 1]);
    }
  }
  __syncthreads();
  const bool single = nsplit <= 1;
  for (int idx = tid; idx < MR * D / 2; idx += kThreads) {
    const int r = idx / (D / 2), col = (idx % (D / 2)) * 2;
    const int rg = row0 + r;
    if (rg >= rows_total) continue;
    float M = -INFINITY;
#pragma unroll
    for (int w = 0; w < WT; ++w) M = fmaxf(M, stat_m[w * MR + r]);
    float L = 0.f, x0 = 0.f, x1 = 0.f;
    if (M != -INFINITY) {
#pragma unroll
      for (int w = 0; w < WT; ++w) {
        const float f = exp2f(stat_m[w * MR + r] - M);
        L += stat_l[w * MR + r] * f;
        const float2 v = *reinterpret_cast<const float2*>(ored + (w * MR + r) * D + col);
        x0 += v.x * f;
        x1 += v.y * f;
      }
    }
    const float inv = L > 0.f ? 1.f / L : 0.f;
    const int j = rg / gqa, hq = kvh * gqa + rg % gqa;
    const size_t orow = (static_cast<size_t>(b) * p.num_q + j) * p.heads_q + hq;
    if (single) {
      *reinterpret_cast<__nv_bfloat162*>(reinterpret_cast<__nv_bfloat16*>(p.out) + orow * D + col) =
          __floats2bfloat162_rn(x0 * inv, x1 * inv);
    } else {
      const size_t prow = static_cast<size_t>(split) * p.batch * p.num_q * p.heads_q + orow;
      *reinterpret_cast<float2*>(reinterpret_cast<float*>(p.partial_o) + prow * D + col) =
          make_float2(x0 * inv, x1 * inv);
      if (col == 0) reinterpret_cast<float*>(p.partial_lse)[prow] = L > 0.f ? M + log2f(L) : -INFINITY;
    }
  }
}

}  // namespace

#define SPK_SV(D, FP8, MR, NAME) \
  extern "C" __global__ void __launch_bounds__(kThreads) NAME(SpecVerifyParams p) { spec_verify_body<D, FP8, MR>(p); }
#if SPK_SV_TMA
#define SPK_SV_TMA_K(D, MR, NAME)                                               \
  extern "C" __global__ void __launch_bounds__(kThreads)                        \
      NAME(const __grid_constant__ specprobe_kernels::SpecVerifyTmaParams tp) { \
    spec_verify_body<D, false, MR, true>(tp.p, &tp);                            \
  }
#else
#define SPK_SV_TMA_K(D, MR, NAME)                        \
  extern "C" __global__ void __launch_bounds__(kThreads) \
      NAME(const __grid_constant__ specprobe_kernels::SpecVerifyTmaParams tp) {}
#endif
SPK_SV_TMA_K(64, 16, spec_verify_d64_bf16_r16_tma)
SPK_SV_TMA_K(64, 32, spec_verify_d64_bf16_r32_tma)
SPK_SV_TMA_K(128, 16, spec_verify_d128_bf16_r16_tma)
SPK_SV_TMA_K(128, 32, spec_verify_d128_bf16_r32_tma)
SPK_SV_TMA_K(256, 16, spec_verify_d256_bf16_r16_tma)
SPK_SV_TMA_K(256, 32, spec_verify_d256_bf16_r32_tma)
SPK_SV(64, false, 16, spec_verify_d64_bf16_r16)
SPK_SV(64, false, 32, spec_verify_d64_bf16_r32)
SPK_SV(128, false, 16, spec_verify_d128_bf16_r16)
SPK_SV(128, false, 32, spec_verify_d128_bf16_r32)
SPK_SV(256, false, 16, spec_verify_d256_bf16_r16)
SPK_SV(256, false, 32, spec_verify_d256_bf16_r32)
SPK_SV(64, true, 16, spec_verify_d64_fp8_r16)
SPK_SV(64, true, 32, spec_verify_d64_fp8_r32)
SPK_SV(128, true, 16, spec_verify_d128_fp8_r16)
SPK_SV(128, true, 32, spec_verify_d128_fp8_r32)
SPK_SV(256, true, 16, spec_verify_d256_fp8_r16)
SPK_SV(256, true, 32, spec_verify_d256_fp8_r32)

// Merges split partials of requests with more than one split:
// out = sum_s 2^(lse_s - max) O_s / sum_s 2^(lse_s - max). Single-split requests were written
// by the attention kernel itself.
extern "C" __global__ void __launch_bounds__(128) spec_verify_combine(SpecVerifyCombineParams p) {
  const int row = blockIdx.x;
  const int b = row / p.rows_per_request;
  const int seq_len = reinterpret_cast<const int*>(p.seq_lens)[b];
  const int tiles = (seq_len + p.tile_tokens - 1) / p.tile_tokens;
  const int nsplit = min(p.num_splits, (tiles + p.tiles_per_split - 1) / p.tiles_per_split);
  if (nsplit <= 1) return;
  const float* lse = reinterpret_cast<const float*>(p.partial_lse);
  float mx = -INFINITY;
  for (int s = 0; s < nsplit; ++s) mx = fmaxf(mx, lse[static_cast<size_t>(s) * p.rows + row]);
  for (int d = threadIdx.x * 2; d < p.head_dim; d += blockDim.x * 2) {
    float n0 = 0.f, n1 = 0.f, den = 0.f;
    for (int s = 0; s < nsplit; ++s) {
      const float l = lse[static_cast<size_t>(s) * p.rows + row];
      const float w = l == -INFINITY ? 0.f : exp2f(l - mx);
      const float2 v = *reinterpret_cast<const float2*>(reinterpret_cast<const float*>(p.partial_o) +
                                                        (static_cast<size_t>(s) * p.rows + row) * p.head_dim + d);
      n0 += w * v.x;
      n1 += w * v.y;
      den += w;
    }
    const float inv = den > 0.f ? 1.f / den : 0.f;
    *reinterpret_cast<__nv_bfloat162*>(reinterpret_cast<__nv_bfloat16*>(p.out) + static_cast<size_t>(row) * p.head_dim +
                                       d) = __floats2bfloat162_rn(n0 * inv, n1 * inv);
  }
}
