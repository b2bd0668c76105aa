// MLA spec-verify attention in the absorbed-weight ("MQA over the latent") form: the k+1 verify
// rows of each request, every query head of the rank, against one shared latent row per cached
// token (MlaVerifyParams, kernel_abi.hpp), through a paged cache of any block size; dense
// (causal) or sparse (each row's own top-k positions, causal mask on top); KV bf16 or e4m3 with
// a per-tensor scale.
//
// Design: a correctness probe, portable and simple (no tensor cores, no async copies): a CTA owns
// (request, verify row, 16 heads) and walks the row's token list in 16-token tiles. Each tile's
// rows are gathered through the block table into shared memory as bf16 (e4m3 converts to bf16
// exactly; the scale is applied in fp32 to the scores and once to the output), each thread
// computes one (head, token) score in fp32, one thread per head moves the online softmax (exact
// rescale every tile, fp32 P), and each thread accumulates v_dim / 256 output columns of every
// head in fp32 registers. Every CTA reads its rows' tokens again (no reuse across verify rows),
// which costs bandwidth but no correctness. Deterministic: fixed order, no atomics.
#include "common.cuh"

// Named, not anonymous: cmake/kernels.cmake compiles every kernels/*.cu as one translation unit.
namespace spk_mla {

using specprobe_kernels::MlaVerifyParams;
constexpr int kThreads = specprobe_kernels::kMlaVerifyThreads;
constexpr int kHeads = specprobe_kernels::kMlaVerifyHeadsPerCta;
constexpr int kTile = specprobe_kernels::kMlaVerifyTileTokens;
constexpr int kCols = specprobe_kernels::kMlaVerifyMaxDim / kThreads;  // output columns per thread
constexpr float kLog2e = 1.4426950408889634f;
static_assert(kHeads * kTile == kThreads, "one (head, token) score per thread");

__device__ __forceinline__ uint32_t bf16x2_bits(float lo, float hi) {
  __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<uint32_t*>(&v);
}

template <bool FP8>
__device__ __forceinline__ void mla_verify_body(const MlaVerifyParams& p) {
  extern __shared__ __align__(16) unsigned char mv_smem[];
  const int rs = specprobe_kernels::mla_verify_row_stride(p.kv_dim);  // bf16 elements, 16-byte multiple
  __nv_bfloat16* qs = reinterpret_cast<__nv_bfloat16*>(mv_smem);      // [kHeads][rs]
  __nv_bfloat16* ks = qs + kHeads * rs;                               // [kTile][rs]
  float* sp = reinterpret_cast<float*>(ks + kTile * rs);              // [kHeads][kTile] scores, then P
  float* m_run = sp + kHeads * kTile;
  float* l_run = m_run + kHeads;
  float* alpha = l_run + kHeads;
  int* toks = reinterpret_cast<int*>(alpha + kHeads);  // the tile's token positions, -1 = none

  const int tid = threadIdx.x;
  const int b = blockIdx.x / p.num_q, j = blockIdx.x % p.num_q;
  const int h0 = blockIdx.y * kHeads;
  const int seq_len = reinterpret_cast<const int*>(p.seq_lens)[b];
  const int pos = seq_len - p.num_q + j;  // this row's position: it sees positions <= pos
  const bool sparse = p.topk > 0;
  const int n = sparse ? p.topk : pos + 1;  // entries of the row's token list
  const int* idx =
      sparse ? reinterpret_cast<const int*>(p.topk_indices) + (static_cast<size_t>(b) * p.num_q + j) * p.topk : nullptr;
  const int* btab = reinterpret_cast<const int*>(p.block_table) + static_cast<size_t>(b) * p.block_table_stride;
  const size_t row_q = static_cast<size_t>(b) * p.num_q + j;

  // The group's q rows -> smem (heads past the rank's count: zeros, never written out).
  const __nv_bfloat16* q = reinterpret_cast<const __nv_bfloat16*>(p.q);
  const int qchunks = p.kv_dim / 8;
  for (int c = tid; c < kHeads * qchunks; c += kThreads) {
    const int h = c / qchunks, col = c % qchunks;
    uint4 v = make_uint4(0, 0, 0, 0);
    if (h0 + h < p.heads) v = *reinterpret_cast<const uint4*>(q + (row_q * p.heads + h0 + h) * p.kv_dim + col * 8);
    *reinterpret_cast<uint4*>(qs + h * rs + col * 8) = v;
  }
  if (tid < kHeads) {
    m_run[tid] = -INFINITY;
    l_run[tid] = 0.f;
  }
  float o[kHeads][kCols];
#pragma unroll
  for (int h = 0; h < kHeads; ++h)
#pragma unroll
    for (int i = 0; i < kCols; ++i) o[h][i] = 0.f;

  const float qk_scale = p.sm_scale * p.kv_scale * kLog2e;  // log2 domain
  const uint8_t* cache = reinterpret_cast<const uint8_t*>(p.kv_cache);
  constexpr int kElemsPerLoad = FP8 ? 16 : 8;  // one 16-byte load
  const int kchunks = p.kv_dim / kElemsPerLoad;

  for (int t0 = 0; t0 < n; t0 += kTile) {
    if (tid < kTile) {
      const int t = t0 + tid;
      int tok = -1;
      if (t < n) {
        tok = sparse ? idx[t] : t;
        if (tok < 0 || tok > pos) tok = -1;  // padding, or past this row's position (causal)
      }
      toks[tid] = tok;
    }
    __syncthreads();  // toks written; the previous tile's P V reads of ks are done

    // Gather the tile's rows through the block table (rows of no token: zeros).
    for (int c = tid; c < kTile * kchunks; c += kThreads) {
      const int r = c / kchunks, col = c % kchunks;
      const int tok = toks[r];
      uint4 v = make_uint4(0, 0, 0, 0);
      if (tok >= 0) {
        const size_t slot = static_cast<size_t>(btab[tok / p.block_size]) * p.block_size + tok % p.block_size;
        v = *reinterpret_cast<const uint4*>(cache + (slot * p.kv_dim + static_cast<size_t>(col) * kElemsPerLoad) *
                                                        (FP8 ? 1 : 2));
      }
      __nv_bfloat16* dst = ks + r * rs + col * kElemsPerLoad;
      if constexpr (FP8) {
        const uint32_t w[4] = {v.x, v.y, v.z, v.w};
        uint32_t out[8];
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const float2 lo = spk::e4m3x2_to_float2(w[i], false), hi = spk::e4m3x2_to_float2(w[i], true);
          out[2 * i] = bf16x2_bits(lo.x, lo.y);  // exact: every e4m3 value is a bf16 value
          out[2 * i + 1] = bf16x2_bits(hi.x, hi.y);
        }
        reinterpret_cast<uint4*>(dst)[0] = make_uint4(out[0], out[1], out[2], out[3]);
        reinterpret_cast<uint4*>(dst)[1] = make_uint4(out[4], out[5], out[6], out[7]);
      } else {
        *reinterpret_cast<uint4*>(dst) = v;
      }
    }
    __syncthreads();

    // Scores: thread (h, t), fp32 over all kv_dim values.
    {
      const int h = tid / kTile, t = tid % kTile;
      float s = -INFINITY;
      if (h0 + h < p.heads && toks[t] >= 0) {
        const __nv_bfloat162* a = reinterpret_cast<const __nv_bfloat162*>(qs + h * rs);
        const __nv_bfloat162* k = reinterpret_cast<const __nv_bfloat162*>(ks + t * rs);
        float acc = 0.f;
        for (int d = 0; d < p.kv_dim / 2; ++d) {
          const float2 x = __bfloat1622float2(a[d]), y = __bfloat1622float2(k[d]);
          acc = fmaf(x.x, y.x, acc);
          acc = fmaf(x.y, y.y, acc);
        }
        s = acc * qk_scale;
      }
      sp[h * kTile + t] = s;
    }
    __syncthreads();

    // Online softmax, one thread per head: new max, rescale factor, P in place of the scores.
    if (tid < kHeads) {
      const int h = tid;
      float mx = m_run[h];
      for (int t = 0; t < kTile; ++t) mx = fmaxf(mx, sp[h * kTile + t]);
      float a = 1.f, sum = 0.f;  // nothing seen yet (mx = -inf): O and l stay 0
      if (mx != -INFINITY) {
        a = exp2f(m_run[h] - mx);  // m_run = -inf -> 0
        for (int t = 0; t < kTile; ++t) {
          const float e = exp2f(sp[h * kTile + t] - mx);  // -inf -> 0
          sp[h * kTile + t] = e;
          sum += e;
        }
      } else {
        for (int t = 0; t < kTile; ++t) sp[h * kTile + t] = 0.f;
      }
      m_run[h] = mx;
      l_run[h] = l_run[h] * a + sum;
      alpha[h] = a;
    }
    __syncthreads();

    // O = alpha O + P V over the first v_dim values of each row.
#pragma unroll
    for (int i = 0; i < kCols; ++i) {
      const int d = tid + i * kThreads;
      if (d < p.v_dim) {
        float v[kTile];
#pragma unroll
        for (int t = 0; t < kTile; ++t) v[t] = __bfloat162float(ks[t * rs + d]);
#pragma unroll
        for (int h = 0; h < kHeads; ++h) {
          float acc = o[h][i] * alpha[h];
#pragma unroll
          for (int t = 0; t < kTile; ++t) acc = fmaf(sp[h * kTile + t], v[t], acc);
          o[h][i] = acc;
        }
      }
    }
  }

  __syncthreads();  // l_run: the last softmax step's (or the initial zeros when the list is empty)
  __nv_bfloat16* out = reinterpret_cast<__nv_bfloat16*>(p.out);
#pragma unroll
  for (int h = 0; h < kHeads; ++h) {
    if (h0 + h >= p.heads) break;
    const float l = l_run[h];
    const float inv = l > 0.f ? p.kv_scale / l : 0.f;
#pragma unroll
    for (int i = 0; i < kCols; ++i) {
      const int d = tid + i * kThreads;
      if (d < p.v_dim) out[(row_q * p.heads + h0 + h) * p.v_dim + d] = __float2bfloat16_rn(o[h][i] * inv);
    }
  }
}

}  // namespace spk_mla

extern "C" __global__ void __launch_bounds__(spk_mla::kThreads) mla_verify_bf16(specprobe_kernels::MlaVerifyParams p) {
  spk_mla::mla_verify_body<false>(p);
}
extern "C" __global__ void __launch_bounds__(spk_mla::kThreads) mla_verify_fp8(specprobe_kernels::MlaVerifyParams p) {
  spk_mla::mla_verify_body<true>(p);
}
