// Spec-verify attention over a paged KV cache: the num_q = k+1 query rows of each request attend
// causally inside the verify window and fully to the cached prefix (row j sits at position
// seq_len - num_q + j). Any GQA ratio (rows = num_q * GQA, padded to 16, not to a power of two),
// head_dim 64/128/256, KV bf16 or e4m3 with per-tensor scales, any block size.
//
// Design (memory-bound decode shape): a CTA owns (split, request, kv head, row group) and streams
// its token range in tiles (64 tokens, 32 for head_dim 256) through shared memory, double-buffered
// with cp.async; every query row of the kv head's group reuses each K/V tile. S = Q K^T on bf16
// tensor cores (warps split the tile's tokens), online softmax in fp32 (log2 domain), O += P V
// (warps split head_dim). fp8 tiles are dequantised to bf16 in smem once per tile. With
// num_splits > 1 each split writes O/l and lse and spec_verify_combine merges them.
// Deterministic: fixed reduction order, no atomics, so graph replays are bit-identical.
#include "common.cuh"

namespace {

using specprobe_kernels::SpecVerifyCombineParams;
using specprobe_kernels::SpecVerifyParams;
constexpr int kThreads = specprobe_kernels::kSpecVerifyThreads;
constexpr float kLog2e = 1.4426950408889634f;

template <int D, bool FP8, int MR>
__device__ __forceinline__ void spec_verify_body(const SpecVerifyParams& p) {
  constexpr int TN = D <= 128 ? 64 : 32;  // = spec_verify_tile_tokens(D)
  constexpr int RB = D + 8;          // bf16 row stride (elements)
  constexpr int SS = TN + 4;         // S row stride (floats)
  constexpr int PS = TN + 8;         // P row stride (bf16)
  constexpr int MT = MR / 16;        // m-tiles
  constexpr int NTS = TN / 4 / 8;    // S n-tiles per warp (warps split tokens)
  constexpr int DW = D / 4;          // O columns per warp
  constexpr int NTO = DW / 8;        // O n-tiles per warp
  constexpr int KV_STAGES_BF16 = FP8 ? 1 : 2;
  extern __shared__ __align__(128) unsigned char smem[];
  __nv_bfloat16* qs = reinterpret_cast<__nv_bfloat16*>(smem);
  __nv_bfloat16* ks = qs + MR * RB;                       // [stages][TN][RB]
  __nv_bfloat16* vs = ks + KV_STAGES_BF16 * TN * RB;      // [stages][TN][RB]
  uint8_t* raw = reinterpret_cast<uint8_t*>(vs + KV_STAGES_BF16 * TN * RB);  // fp8: [2][K,V][TN][D]
  float* ss = reinterpret_cast<float*>(raw + (FP8 ? 2 * 2 * TN * D : 0));
  __nv_bfloat16* ps = reinterpret_cast<__nv_bfloat16*>(ss + MR * SS);
  float* row_m = reinterpret_cast<float*>(ps + MR * PS);
  float* row_l = row_m + MR;
  float* row_alpha = row_l + MR;
  int* row_pos = reinterpret_cast<int*>(row_alpha + MR);

  const int split = blockIdx.x;
  const int b = blockIdx.y / p.heads_kv;
  const int kvh = blockIdx.y % p.heads_kv;
  const int gqa = p.heads_q / p.heads_kv;
  const int rows_total = p.num_q * gqa;
  const int row0 = blockIdx.z * MR;
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int g = lane >> 2, tig = lane & 3;

  const int seq_len = reinterpret_cast<const int*>(p.seq_lens)[b];
  const int num_tiles = (seq_len + TN - 1) / TN;
  const int per_split = (num_tiles + p.num_splits - 1) / p.num_splits;
  const int tile_begin = split * per_split;
  const int tile_end = min(num_tiles, tile_begin + per_split);

  // Q rows -> smem (padded rows zero), row positions, stats.
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
  for (int r = tid; r < MR; r += kThreads) {
    const int rg = row0 + r;
    row_pos[r] = rg < rows_total ? seq_len - p.num_q + rg / gqa : -1;
    row_m[r] = -INFINITY;
    row_l[r] = 0.f;
  }

  const int* btab = reinterpret_cast<const int*>(p.block_table) + static_cast<size_t>(b) * p.block_table_stride;
  constexpr int EB = FP8 ? 1 : 2;  // bytes per cached element
  const uint8_t* kc = reinterpret_cast<const uint8_t*>(p.k_cache);
  const uint8_t* vc = reinterpret_cast<const uint8_t*>(p.v_cache);
  auto load_tile = [&](int tile, int stage) {
    constexpr int kChunks = D * EB / 16;  // 16-byte chunks per token row
    for (int c = tid; c < 2 * TN * kChunks; c += kThreads) {
      const int which = c / (TN * kChunks);  // 0 = K, 1 = V
      const int rc = c % (TN * kChunks);
      const int r = rc / kChunks, col = rc % kChunks;
      const int tok = tile * TN + r;
      const bool valid = tok < seq_len;
      const uint8_t* base = which ? vc : kc;
      const uint8_t* src = base;
      if (valid) {
        const int blk = btab[tok / p.block_size];
        const size_t slot = static_cast<size_t>(blk) * p.block_size + tok % p.block_size;
        src = base + ((slot * p.heads_kv + kvh) * D) * EB + col * 16;
      }
      void* dst;
      if constexpr (FP8) {
        dst = raw + ((stage * 2 + which) * TN + r) * D + col * 16;
      } else {
        dst = (which ? vs : ks) + (stage * TN + r) * RB + col * 8;
      }
      spk::cp_async16(dst, src, valid);
    }
  };

  float o[MT][NTO][4];
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int n = 0; n < NTO; ++n) o[mt][n][0] = o[mt][n][1] = o[mt][n][2] = o[mt][n][3] = 0.f;

  const float qk_scale = p.sm_scale * kLog2e * (FP8 ? p.k_scale : 1.f);
  if (tile_begin < tile_end) load_tile(tile_begin, 0);
  spk::cp_async_commit();

  for (int tile = tile_begin; tile < tile_end; ++tile) {
    const int stage = (tile - tile_begin) & 1;
    spk::cp_async_wait<0>();
    __syncthreads();
    if (tile + 1 < tile_end) load_tile(tile + 1, stage ^ 1);
    spk::cp_async_commit();
    const __nv_bfloat16* kt;
    const __nv_bfloat16* vt;
    if constexpr (FP8) {
      // Dequantise the stage into the bf16 tiles (K scale folded into qk_scale).
      const uint8_t* rk = raw + (stage * 2 + 0) * TN * D;
      const uint8_t* rv = raw + (stage * 2 + 1) * TN * D;
      for (int c = tid; c < 2 * TN * D / 4; c += kThreads) {
        const int which = c / (TN * D / 4);
        const int e = (c % (TN * D / 4)) * 4;
        const int r = e / D, col = e % D;
        const uint32_t x = *reinterpret_cast<const uint32_t*>((which ? rv : rk) + r * D + col);
        const float sc = which ? p.v_scale : 1.f;
        const float2 lo = spk::e4m3x2_to_float2(x, false), hi = spk::e4m3x2_to_float2(x, true);
        __nv_bfloat162* dst = reinterpret_cast<__nv_bfloat162*>((which ? vs : ks) + r * RB + col);
        dst[0] = __floats2bfloat162_rn(lo.x * sc, lo.y * sc);
        dst[1] = __floats2bfloat162_rn(hi.x * sc, hi.y * sc);
      }
      __syncthreads();
      kt = ks;
      vt = vs;
    } else {
      kt = ks + stage * TN * RB;
      vt = vs + stage * TN * RB;
    }

    // S = Q K^T for this warp's TN/4 tokens, all MR rows.
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
      float s[NTS][4];
#pragma unroll
      for (int n = 0; n < NTS; ++n) s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.f;
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk) {
        uint32_t a[4];
        spk::ldmatrix_x4(a, qs + (mt * 16 + (lane & 15)) * RB + kk * 16 + (lane >> 4) * 8);
#pragma unroll
        for (int n = 0; n < NTS; n += 2) {
          // Two 8-token n-tiles: matrices (tok 0-7, d lo), (tok 0-7, d hi), (tok 8-15, d lo), (tok 8-15, d hi).
          uint32_t bb[4];
          const int tok = warp * (TN / 4) + n * 8 + (lane & 7) + ((lane >> 4) & 1) * 8;
          spk::ldmatrix_x4(bb, kt + tok * RB + kk * 16 + ((lane >> 3) & 1) * 8);
          spk::mma_bf16_16816(s[n], a, bb[0], bb[1]);
          if (n + 1 < NTS) spk::mma_bf16_16816(s[n + 1], a, bb[2], bb[3]);
        }
      }
#pragma unroll
      for (int n = 0; n < NTS; ++n) {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int r = mt * 16 + g + (e >> 1) * 8;
          const int tl = warp * (TN / 4) + n * 8 + tig * 2 + (e & 1);
          const int tok = tile * TN + tl;
          ss[r * SS + tl] = tok <= row_pos[r] ? s[n][e] * qk_scale : -INFINITY;
        }
      }
    }
    __syncthreads();

    // Online softmax: kThreads / MR threads per row.
    {
      constexpr int TPR = kThreads / MR;
      constexpr int CPT = TN / TPR;  // columns per thread
      const int r = tid / TPR, part = tid % TPR;
      float mx = -INFINITY;
#pragma unroll
      for (int c = 0; c < CPT; ++c) mx = fmaxf(mx, ss[r * SS + part * CPT + c]);
#pragma unroll
      for (int off = 1; off < TPR; off <<= 1) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, off));
      const float m_old = row_m[r];
      const float m_new = fmaxf(m_old, mx);
      const float base = m_new == -INFINITY ? 0.f : m_new;
      float sum = 0.f;
#pragma unroll
      for (int c = 0; c < CPT; ++c) {
        const float e = exp2f(ss[r * SS + part * CPT + c] - base);
        const __nv_bfloat16 eb = __float2bfloat16_rn(e);
        ps[r * PS + part * CPT + c] = eb;
        sum += __bfloat162float(eb);  // l sums what P V multiplies
      }
#pragma unroll
      for (int off = 1; off < TPR; off <<= 1) sum += __shfl_xor_sync(0xffffffffu, sum, off);
      __syncwarp();
      if (part == 0) {
        const float alpha = exp2f(m_old - base);  // m_old = -inf -> 0
        row_alpha[r] = alpha;
        row_l[r] = row_l[r] * alpha + sum;
        row_m[r] = m_new;
      }
    }
    __syncthreads();

    // O = alpha O + P V for this warp's DW columns.
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
      const float a0 = row_alpha[mt * 16 + g], a1 = row_alpha[mt * 16 + g + 8];
#pragma unroll
      for (int n = 0; n < NTO; ++n) {
        o[mt][n][0] *= a0;
        o[mt][n][1] *= a0;
        o[mt][n][2] *= a1;
        o[mt][n][3] *= a1;
      }
#pragma unroll
      for (int kk = 0; kk < TN / 16; ++kk) {
        uint32_t a[4];
        spk::ldmatrix_x4(a, ps + (mt * 16 + (lane & 15)) * PS + kk * 16 + (lane >> 4) * 8);
#pragma unroll
        for (int n = 0; n < NTO; n += 2) {
          // matrices (tok 0-7, d n), (tok 8-15, d n), (tok 0-7, d n+1), (tok 8-15, d n+1), transposed.
          uint32_t bb[4];
          const int tok = kk * 16 + (lane & 7) + ((lane >> 3) & 1) * 8;
          const int col = warp * DW + n * 8 + (lane >> 4) * 8;
          spk::ldmatrix_x4_trans(bb, vt + tok * RB + col);
          spk::mma_bf16_16816(o[mt][n], a, bb[0], bb[1]);
          if (n + 1 < NTO) spk::mma_bf16_16816(o[mt][n + 1], a, bb[2], bb[3]);
        }
      }
    }
  }
  spk::cp_async_wait<0>();
  __syncthreads();

  // Epilogue: normalise and store (or store the split's partial).
  const float vfix = 1.f;
#pragma unroll
  for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int r = mt * 16 + g + half * 8;
      const int rg = row0 + r;
      if (rg >= rows_total) continue;
      const int j = rg / gqa, hq = kvh * gqa + rg % gqa;
      const float l = row_l[r];
      const float inv = l > 0.f ? vfix / l : 0.f;
      const size_t orow = (static_cast<size_t>(b) * p.num_q + j) * p.heads_q + hq;
#pragma unroll
      for (int n = 0; n < NTO; ++n) {
        const int col = warp * DW + n * 8 + tig * 2;
        const float x0 = o[mt][n][half * 2] * inv, x1 = o[mt][n][half * 2 + 1] * inv;
        if (p.num_splits == 1) {
          *reinterpret_cast<__nv_bfloat162*>(reinterpret_cast<__nv_bfloat16*>(p.out) + orow * D + col) =
              __floats2bfloat162_rn(x0, x1);
        } else {
          const size_t prow = static_cast<size_t>(split) * p.batch * p.num_q * p.heads_q + orow;
          *reinterpret_cast<float2*>(reinterpret_cast<float*>(p.partial_o) + prow * D + col) = make_float2(x0, x1);
          if (n == 0 && tig == 0 && warp == 0)
            reinterpret_cast<float*>(p.partial_lse)[prow] = l > 0.f ? row_m[r] + log2f(l) : -INFINITY;
        }
      }
    }
  }
}

}  // namespace

#define SPK_SV(D, FP8, MR, NAME)                                                                   \
  extern "C" __global__ void __launch_bounds__(kThreads) NAME(SpecVerifyParams p) {             \
    spec_verify_body<D, FP8, MR>(p);                                                            \
  }
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

// Merges split partials: out = sum_s 2^(lse_s - max) O_s / sum_s 2^(lse_s - max).
extern "C" __global__ void __launch_bounds__(128) spec_verify_combine(SpecVerifyCombineParams p) {
  const int row = blockIdx.x;
  const float* lse = reinterpret_cast<const float*>(p.partial_lse);
  float mx = -INFINITY;
  for (int s = 0; s < p.num_splits; ++s) mx = fmaxf(mx, lse[static_cast<size_t>(s) * p.rows + row]);
  for (int d = threadIdx.x; d < p.head_dim; d += blockDim.x) {
    float num = 0.f, den = 0.f;
    for (int s = 0; s < p.num_splits; ++s) {
      const float l = lse[static_cast<size_t>(s) * p.rows + row];
      const float w = l == -INFINITY ? 0.f : exp2f(l - mx);
      num += w * reinterpret_cast<const float*>(p.partial_o)[(static_cast<size_t>(s) * p.rows + row) * p.head_dim + d];
      den += w;
    }
    reinterpret_cast<__nv_bfloat16*>(p.out)[static_cast<size_t>(row) * p.head_dim + d] =
        __float2bfloat16_rn(den > 0.f ? num / den : 0.f);
  }
}
