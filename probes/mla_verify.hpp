// MLA verify-attention probe (kernels/mla_verify.cu): the k+1 verify rows per request of an MLA
// model in the absorbed-weight form the MLA decode kernels run, over a paged latent cache, dense
// or sparse (DSA top-k). Spec validation, input generation, the fp64 reference and the memory
// estimate are GPU-independent; upload / launch / run touch the GPU.
//
// Spec keys (all optional): k (0..15, default 3), heads (query heads per rank, 1..128, default
// 16), latent_dim (default 512), rope_dim (default 64; kv_dim = latent_dim + rope_dim, a multiple
// of 16 up to 1024), v_dim (latent_dim, the default: DeepSeek V3/R1/V3.2, Kimi K2; or
// latent_dim + rope_dim: DeepSeek-V4, whose K and V are one 512-value row), topk (0 = dense, else
// the sparse variant's index_topk), kv_dtype (bf16 | fp8: e4m3 with one per-tensor scale),
// block_size (1..4096, default 64: FlashMLA's), batch, context, seed, time, bench.
// Threshold (fp32 scores, P and accumulation, bf16 output): ||out - ref|| / ||ref|| <= 5e-3 and
// max|out - ref| / max|ref| <= 1e-2; every output element written and finite.
#pragma once
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/json.hpp"
#include "kernels/kernel_abi.hpp"
#include "probes/kinds.hpp"
#include "probes/probe_common.hpp"

namespace specprobe {
class GpuSession;  // gpu/cuda_session.hpp: only the upload / launch / run functions use one
}

namespace specprobe::probes {

// The shape a spec names (defaults filled in).
struct MlaVerifyShape {
  int k = 3, heads = 16, latent_dim = 512, rope_dim = 64, v_dim = 512, topk = 0, block_size = 64;
  bool fp8 = false;
  int kv_dim() const { return latent_dim + rope_dim; }
};
MlaVerifyShape mla_verify_shape(const Json& spec);

// Why a spec cannot run, naming the key: `status` kError for a value no model has (k -1,
// latent_dim 0, v_dim neither latent_dim nor latent_dim + rope_dim, an unknown kv_dtype),
// kSkip for a shape past the kernel's limits (k > 15, heads > 128, kv_dim > 1024 or not a
// multiple of 16, block_size > 4096); both empty when it can run.
struct SpecProblem {
  std::string status, reason;
};
SpecProblem mla_verify_spec_problem(const Json& spec);

// The batch and context the probe uses: the spec's, else 2 x 300 (64 x 8192 with bench); the
// sparse variant's default context is topk + 256, so that a selection is a strict subset.
ProbeSize mla_verify_probe_size(const Json& spec);

struct MlaVerifyInputs {
  int batch = 0, num_q = 0, heads = 0, kv_dim = 0, v_dim = 0, block_size = 0, topk = 0;
  bool fp8 = false;
  float kv_scale = 1, sm_scale = 1;
  int bt_stride = 0, num_blocks = 0;
  std::vector<int> seq_lens;      // [batch]
  std::vector<int> block_table;   // [batch, bt_stride]
  std::vector<int> topk_indices;  // [batch, num_q, topk]: positions in the request, -1 = none
  std::vector<uint16_t> q;        // bf16 [batch, num_q, heads, kv_dim]
  std::vector<uint8_t> kv_cache;  // bf16 (2 bytes) or e4m3 [num_blocks, block_size, kv_dim]
  size_t out_elems() const { return static_cast<size_t>(batch) * num_q * heads * v_dim; }
};
// Seeded inputs: request lengths in [k + 1, context] (the last one = context), a shuffled block
// table with spare blocks, never-zero q and cache values. Sparse: each row's list holds its own
// position, every later verify position (which the causal mask must drop), then random earlier
// positions, shuffled, padded with -1 where the request is shorter than topk.
MlaVerifyInputs make_mla_verify_inputs(const MlaVerifyShape& s, int batch, int context, uint64_t seed);

// Bytes the probe holds: on the device the inputs and the output; on the host the same plus the
// reference's scratch (one verify row's scores for every head).
struct MlaVerifyBytes {
  uint64_t q = 0, cache = 0, block_table = 0, seq_lens = 0, topk_indices = 0, out = 0, reference = 0;
  uint64_t inputs() const { return q + cache + block_table + seq_lens + topk_indices; }
  uint64_t device() const { return inputs() + out; }
  uint64_t host() const { return device() + reference; }
};
// For the lengths make_mla_verify_inputs draws (draws only the lengths: cheap at any size).
MlaVerifyBytes mla_verify_input_bytes(const MlaVerifyShape& s, int batch, int context, uint64_t seed);

// The fp8 cache's per-tensor scale: 7/16 keeps e4m3 x scale exact in fp32 and bf16, and is not
// a power of two, so a kernel that forgets the scale fails.
inline constexpr float kMlaVerifyFp8Scale = 0.4375f;
inline constexpr double kMlaVerifyNormRel = 5e-3;
inline constexpr double kMlaVerifyMaxRel = 1e-2;

// fp64 reference of verify row j of request b for every head: [heads][v_dim], from the cache's
// values (e4m3 x kv_scale for fp8) and the row's visible positions, read through the block table.
std::vector<double> mla_verify_reference(const MlaVerifyInputs& in, int b, int j);
// The same for head H alone, into OUT[v_dim] (the heads are independent: the same values).
void mla_verify_reference_head(const MlaVerifyInputs& in, int b, int j, int h, double* out);
// Checks `out` (bf16 bits) for the given requests (all when empty).
ErrorStats check_mla_verify(const MlaVerifyInputs& in, const std::vector<uint16_t>& out,
                            const std::vector<int>& requests);
bool mla_verify_passes(const ErrorStats& e);

struct MlaVerifyLaunch {
  std::string kernel;  // "mla_verify_bf16" | "mla_verify_fp8"
  unsigned grid_x = 1, grid_y = 1, threads = specprobe_kernels::kMlaVerifyThreads, smem = 0;
};
MlaVerifyLaunch mla_verify_launch_config(const MlaVerifyInputs& in);

// The launch and its parameters, whose device addresses (params.out, .block_table,
// .topk_indices, ...) are the uploaded buffers.
struct MlaVerifyDevice {
  specprobe_kernels::MlaVerifyParams params{};
  MlaVerifyLaunch launch;
};
// Allocates and uploads; out is poisoned. Error on any Driver API failure.
Expected<MlaVerifyDevice> upload_mla_verify(GpuSession& s, const MlaVerifyInputs& in);
Status launch_mla_verify(GpuSession& s, const MlaVerifyDevice& dev);

// The result record (pass / fail / crash / skip / error, metrics, evidence), phases marked:
// spec problems first, then the request set's limits (error) and host memory (skip), then with
// the context open the device's free memory (skip), before anything is allocated.
Json run_mla_verify_probe(const Json& spec);

// The MLA verify probe at the plan's shape, one spec per k of the what-if sweep (1..8, and the
// plan's own k), for models that verify through MLA (model.mla): latent and rope dims from
// model.mla_dims (kv_lora_rank + qk_rope_head_dim, output in the latent), or for a model without
// kv_lora_rank (DeepSeek-V4) from model.head_dim, the whole row, with qk_rope_head_dim of it rope
// (output: the whole row); the sparse variant with model.dsa.index_topk for DSA models, its
// context topk + 256 so that a selection is a strict subset. Block size: serve.block_size, else
// SGLang's page size, else 64 (FlashMLA's). Empty when the model is not MLA or a dimension is
// unknown. MODE is unused (auto and all probe the same ks).
std::vector<Json> mla_verify_plan_specs(const Json& facts, const std::string& mode);
// The largest k the MLA verify probe covers in a plan: the what-if sweep's (SweepOptions::max_k,
// src/rules/sweep.hpp), so that every k of the support matrix has its own probe result.
inline constexpr int kMlaVerifySweepMaxK = 8;
// Whether the plan verifies through the MLA probe (then the GQA spec-verify probes do not run).
bool mla_verify_applies(const Json& facts);

// Its entry in the probe table (probes/kinds.hpp).
extern const ProbeKind kMlaVerifyProbe;

}  // namespace specprobe::probes
