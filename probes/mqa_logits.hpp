// Paged MQA logits probe (kernels/mqa_logits.cu): DeepSeek V3.2/V4 DSA indexer scoring for a
// given next_n, heads, head_dim and block_kv. Input generation, fp64 CPU reference and launch
// configuration are GPU-independent; run_mqa_logits_probe touches the GPU.
//
// Spec keys: next_n (1..8), heads (16|32|64|128), head_dim (64|128), block_kv (32|64|256),
// batch, context (longest request), lengths ("random": requests drawn in [next_n, context], the
// last one full; "full": every request has the whole context, as DeepGEMM's benchmark), seed,
// bench (time at this size, check sampled rows).
// Thresholds, max|out - ref| / max|ref| over every checked (row, t < context_lens[row]), every
// such element written and finite, no element at t >= context_lens[row] written:
//   - 1e-4 for the mma.sync kernels (exact e4m3 products, fp32 accumulation: ~1e-7 measured);
//   - 1e-3 for the sm_90a e4m3 wgmma kernel: Hopper's fp8 tensor-core path accumulates with
//     ~14-bit precision (DeepSeek-V3 report 3.3.2). Measured 1.6e-4 - 3.4e-4 on an H100 over
//     next_n 1-8 x H 32/64; DeepGEMM's kernel (deepseek-ai/DeepGEMM main @54e2261,
//     fp8_fp4_paged_mqa_logits), which engines run, shows 1.5e-4 by the same measure on an H200
//     (docs/perf/kernels.md#deepgemm). 1e-3 keeps ~3x margin over that spread while
//     any indexing, layout or race bug (wrong token, head or scale) gives errors of order 1.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "common/json.hpp"
#include "kernels/kernel_abi.hpp"
#include "probes/kinds.hpp"
#include "probes/probe_common.hpp"

namespace specprobe::probes {

inline constexpr double kMqaLogitsMaxRel = 1e-4;
inline constexpr double kMqaLogitsMaxRelFp8Tc = 1e-3;

struct MqaInputs {
  int batch = 0, next_n = 0, heads = 0, head_dim = 0, block_kv = 0;
  int bt_stride = 0, num_blocks = 0, max_context = 0, logits_stride = 0;
  std::vector<int> context_lens;  // [batch, next_n]
  std::vector<int> block_table;   // [batch, bt_stride]
  std::vector<uint8_t> q;         // [batch, next_n, heads, head_dim] e4m3
  std::vector<uint8_t> kv;        // [num_blocks, block_kv, head_dim + 4]
  std::vector<float> weights;     // [batch * next_n, heads]
  size_t block_bytes() const { return static_cast<size_t>(block_kv) * (head_dim + 4); }
};

// Bytes of each buffer the probe holds, on the host (inputs, then the downloaded logits) and on
// the device (the same buffers), for a request set with `num_blocks` KV blocks in all.
struct MqaBytes {
  uint64_t q = 0, kv = 0, weights = 0, context_lens = 0, block_table = 0, logits = 0;
  uint64_t total() const { return q + kv + weights + context_lens + block_table + logits; }
};
MqaBytes mqa_buffer_bytes(int batch, int next_n, int heads, int head_dim, int block_kv, int context,
                          int64_t num_blocks);
// The same for the request lengths make_mqa_inputs draws for these arguments (draws only the
// lengths: cheap at any size). Sizes within probe_size_problem's limits.
MqaBytes mqa_input_bytes(int batch, int next_n, int heads, int head_dim, int block_kv, int context, uint64_t seed,
                         bool full_lengths);

// Requests get lengths in [next_n, context] (the last one exactly context); row i of request b
// sees context_lens[b, i] = L_b - next_n + i + 1, as vLLM fills them.
MqaInputs make_mqa_inputs(int batch, int next_n, int heads, int head_dim, int block_kv, int context, uint64_t seed,
                          bool full_lengths = false);

// fp64 reference of one output row (b * next_n + i), columns [0, context_lens[row]).
std::vector<double> mqa_reference_row(const MqaInputs& in, int row);

// Compares the kernel's logits for the given rows (all rows when empty) with the reference,
// including the poison checks described above.
ErrorStats check_mqa_logits(const MqaInputs& in, const std::vector<float>& logits, const std::vector<int>& rows);

struct MqaLaunch {
  std::string kernel;  // "mqa_logits_d128_hc64"
  int rows_per_cta = 1, token_splits = 1, tiles_per_cta = 4, tasks = 1, stages = 0;
  int math_wgs = 1;  // sm_90a kernels: math warpgroups per CTA (> 1: warp-specialized)
  unsigned grid_x = 1, grid_y = 1, grid_z = 1, threads = 32, smem = 0;
};
MqaLaunch mqa_launch_config(int batch, int next_n, int heads, int head_dim, int max_context, int tiles_per_cta = 4);

// Query rows per wgmma chunk of the sm_90a kernel: N = rows * heads <= 256, fewest padded columns.
int mqa_rows_per_chunk(int next_n, int heads);
// A warp-specialized sm_90a kernel (mqa_logits_ws<math_wgs>_*, one CTA per SM) and its query
// rows per wgmma chunk; math_wgs = 0: none suits the shape (use the two-CTA kernel).
struct MqaWsVariant {
  int math_wgs = 0, rpc = 0;
  int held = 0;  // > 0: the kernel for exactly that many chunks, every chunk's weights in registers
};
// The fastest warp-specialized variant by the measured cost model in mqa_logits.cpp, among
// those whose shared memory fits smem_per_block.
MqaWsVariant mqa_ws_variant(int batch, int next_n, int heads, int head_dim, int64_t smem_per_block);
// sm_90a kernel (kernels/mqa_logits.cu): persistent (grid_x is left 0 for the caller to set to
// SMs x resident CTAs per SM), rows_per_cta = query rows per wgmma chunk, stages = ring depth
// per math warpgroup. Without ws: mqa_logits_tma_*, 160 threads, rows per mqa_rows_per_chunk,
// the deepest ring <= 8 that keeps two CTAs per SM when possible. With ws: mqa_logits_ws*,
// 128 x (math_wgs + 1) threads, the deepest ring <= kMqaWsMaxStages (3) that fits.
MqaLaunch mqa_tma_launch_config(int batch, int next_n, int heads, int head_dim, int64_t smem_per_sm,
                                int64_t smem_per_block, MqaWsVariant ws = {});
// Whether the sm_90a kernel exists for this GPU and shape (compute capability 9.0 only).
bool mqa_tma_supported(int cc_major, int cc_minor, int heads, int head_dim, int block_kv);
// The relative-error threshold of a kernel (see above).
double mqa_threshold(const std::string& kernel);
// The sm_90a kernels' q tensor map (uint8 elements, element strides 1): 2-D {D, B * next_n * H}
// with a box of RPC * H rows, or for paired rows (kernel_abi.hpp mqa_ws_paired_rows) 4-D
// {D, 4, B * next_n, H / 4} with a box {D, 4, 2, H / 4}. Box element e lands in B column e / D.
struct MqaQMapGeometry {
  int rank = 2;
  uint64_t dims[4] = {};
  uint64_t strides[3] = {};  // bytes, of dims 1..rank-1
  unsigned box[4] = {};
};
MqaQMapGeometry mqa_q_map_geometry(const MqaInputs& in, const MqaLaunch& l);

// Validates the spec's shape against what the kernel supports; empty string when supported.
std::string mqa_shape_problem(const Json& spec);

// The batch and context the probe uses for a spec (its keys, else the defaults: 2 x 300, or
// 256 x 8192 with bench).
ProbeSize mqa_probe_size(const Json& spec);

// Runs the probe on GPU 0 in a fresh context (see GpuSession). Returns a result record:
// skip for a shape the kernel lacks or a footprint this machine cannot hold (host memory, free
// device memory: the figures in the reason), error for a request set outside probe_size_problem's
// limits. Marks its phases (probe_phase) for the runner.
Json run_mqa_logits_probe(const Json& spec);

// Its entry in the probe table (probes/kinds.hpp).
extern const ProbeKind kMqaLogitsProbe;

}  // namespace specprobe::probes
