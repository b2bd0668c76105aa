// Spec-verify attention probe (kernels/spec_verify.cu): the k+1 verify rows per request over a
// paged KV cache, for a given GQA ratio, head_dim, KV dtype and block size. Input generation,
// the fp64 reference and launch configuration are GPU-independent; the run functions touch the GPU.
//
// Spec keys: k (num_speculative_tokens, 0..15), gqa (1..16), heads_kv, head_dim (64|128|256),
// kv_dtype (bf16|fp8), block_size, batch, context, seed, splits (0 = auto), bench.
// Thresholds (bf16 output, bf16 P, fp32 accumulation): ||out - ref|| / ||ref|| <= 1e-2 and
// max|out - ref| / max|ref| <= 3e-2 (fp8 KV: the reference uses the same dequantised values,
// rounded to bf16 as the kernel does); every output element written and finite.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/json.hpp"
#include "kernels/kernel_abi.hpp"
#include "probes/kinds.hpp"
#include "probes/probe_common.hpp"

namespace specprobe {
class GpuSession;
}

namespace specprobe::probes {

inline constexpr double kSpecVerifyNormRel = 1e-2;
inline constexpr double kSpecVerifyMaxRel = 3e-2;

struct SpecVerifyInputs {
  int batch = 0, num_q = 0, heads_q = 0, heads_kv = 0, head_dim = 0, block_size = 0;
  bool fp8 = false;
  float k_scale = 1, v_scale = 1;
  int bt_stride = 0, num_blocks = 0;
  std::vector<int> seq_lens;     // [batch]
  std::vector<int> block_table;  // [batch, bt_stride]
  std::vector<uint16_t> q;       // bf16 [batch, num_q, heads_q, head_dim]
  std::vector<uint8_t> k_cache;  // bf16 (2 bytes) or e4m3 [num_blocks, block_size, heads_kv, head_dim]
  std::vector<uint8_t> v_cache;
  size_t out_elems() const { return static_cast<size_t>(batch) * num_q * heads_q * head_dim; }
};

// Bytes of the buffers the probe holds: on the host one input set (q, both caches, block table,
// lengths) plus the downloaded output; on the device the same plus the split partials.
struct SpecVerifyBytes {
  uint64_t q = 0, caches = 0, block_table = 0, seq_lens = 0, out = 0, partials = 0;
  uint64_t inputs() const { return q + caches + block_table + seq_lens; }
  uint64_t host() const { return inputs() + out; }
  uint64_t device() const { return inputs() + out + partials; }
};
// For the request lengths make_spec_verify_inputs draws for these arguments (draws only the
// lengths: cheap at any size); partials stay 0. Sizes within probe_size_problem's limits.
SpecVerifyBytes spec_verify_input_bytes(int batch, int k, int gqa, int heads_kv, int head_dim, bool fp8, int block_size,
                                        int context, uint64_t seed);
// For generated inputs and a launch with `num_splits` splits (upload_spec_verify's buffers).
SpecVerifyBytes spec_verify_buffer_bytes(const SpecVerifyInputs& in, int num_splits);

SpecVerifyInputs make_spec_verify_inputs(int batch, int k, int gqa, int heads_kv, int head_dim, bool fp8,
                                         int block_size, int context, uint64_t seed);

// Element offset of (request b, token t, kv head kvh)'s head_dim values in k_cache / v_cache.
size_t spec_verify_cache_offset(const SpecVerifyInputs& in, int b, int t, int kvh);
// fp64 scores q . k_t * sm_scale * k_scale of one (request, verify row j, q head) for the tokens
// it attends to (t <= its causal limit).
std::vector<double> spec_verify_scores(const SpecVerifyInputs& in, int b, int j, int hq);
// fp64 reference for one (request, verify row j, q head): head_dim values.
std::vector<double> spec_verify_reference(const SpecVerifyInputs& in, int b, int j, int hq);

// Checks `out` (bf16 bits) for the given requests (all when empty).
ErrorStats check_spec_verify(const SpecVerifyInputs& in, const std::vector<uint16_t>& out,
                             const std::vector<int>& requests);
bool spec_verify_passes(const ErrorStats& e);

struct SpecVerifyLaunch {
  std::string kernel;  // "spec_verify_d128_bf16_r32"
  int rows_per_cta = 16, num_splits = 1, tiles_per_split = 1, stages = 2;
  int box_tokens = 0;  // > 0: the copy-engine variant (SpecVerifyTmaParams), its box height
  unsigned grid_x = 1, grid_y = 1, grid_z = 1, threads = 128, smem = 0;
};
// num_splits > 0: a request of the longest length gets that many splits; 0 = choose the split
// length so that the grid holds about 12 CTAs per SM of equal work (short requests get fewer
// splits). grid_x (= num_splits in the result) covers the block table's whole capacity, so a
// replayed graph stays correct for any new lengths. The ring depth is the deepest that fits
// smem_limit bytes per block.
// copy_engine: the GPU runs the _tma variant (sm_90+ with cuTensorMapEncodeTiled); it is taken
// for bf16 KV where a box of gcd(tile tokens, block_size) >= 8 tokens fits, else cp.async.
SpecVerifyLaunch spec_verify_launch_config(const SpecVerifyInputs& in, int num_splits, int sm_count,
                                           int smem_limit = 99 * 1024, bool copy_engine = false);
std::string spec_verify_shape_problem(const Json& spec);
// The batch and context the probes use for a spec (its keys, else 2 x 300, or 64 x 8192 with bench).
ProbeSize spec_verify_probe_size(const Json& spec);

// Device copies of the inputs plus the launch (main kernel, and combine when split).
struct SpecVerifyDevice {
  specprobe_kernels::SpecVerifyParams params{};
  specprobe_kernels::SpecVerifyCombineParams combine{};
  specprobe_kernels::SpecVerifyTmaParams tma{};  // launch.box_tokens > 0: params + maps
  SpecVerifyLaunch launch;
  unsigned long long d_seq_lens = 0, d_block_table = 0, d_out = 0, d_q = 0;
};
// Allocates and uploads; out is poisoned. Error on any Driver API failure. allow_copy_engine:
// the _tma variant where the GPU and the shape allow it (spec_verify_launch_config).
Expected<SpecVerifyDevice> upload_spec_verify(GpuSession& s, const SpecVerifyInputs& in, int num_splits,
                                              bool allow_copy_engine = true);
Status launch_spec_verify(GpuSession& s, const SpecVerifyDevice& dev);

// Result records as run_mqa_logits_probe's: skip for an unsupported shape or a footprint this
// machine cannot hold, error for a request set outside probe_size_problem's limits; phases marked.
Json run_spec_verify_probe(const Json& spec);
// CUDA-graph replay: capture the launch(es) with Driver API stream capture, replay with new
// seq_lens / block tables / queries written into the same buffers, require bit-identical
// results to eager launches and a passing reference check. Spec keys as above.
Json run_graph_replay_probe(const Json& spec);

// Their entries in the probe table (probes/kinds.hpp).
extern const ProbeKind kSpecVerifyProbe;
extern const ProbeKind kGraphReplayProbe;

}  // namespace specprobe::probes
