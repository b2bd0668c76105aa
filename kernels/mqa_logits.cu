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

#define SPK_MQA(D, HC)                                                                       \
  extern "C" __global__ void __launch_bounds__(256, 2) mqa_logits_d##D##_hc##HC(MqaLogitsParams p) { \
    mqa_logits_body<D, HC>(p);                                                               \
  }
SPK_MQA(64, 16)
SPK_MQA(64, 32)
SPK_MQA(64, 64)
SPK_MQA(128, 16)
SPK_MQA(128, 32)
SPK_MQA(128, 64)
