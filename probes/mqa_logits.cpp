// Host side of the paged MQA logits probe (see mqa_logits.hpp).
#include "probes/mqa_logits.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <utility>

#include "facts/answers.hpp"
#include "gpu/cuda_session.hpp"
#include "probes/probe_gpu.hpp"

namespace specprobe::probes {

using specprobe_kernels::kMqaTileTokens;

MqaInputs make_mqa_inputs(int batch, int next_n, int heads, int head_dim, int block_kv, int context, uint64_t seed,
                          bool full_lengths) {
  Rng rng(seed);
  MqaInputs in;
  in.batch = batch;
  in.next_n = next_n;
  in.heads = heads;
  in.head_dim = head_dim;
  in.block_kv = block_kv;
  in.max_context = context;
  in.logits_stride = (context + 255) / 256 * 256 + 256;  // extra columns catch out-of-range writes
  const std::vector<int> lens = draw_request_lengths(rng, batch, next_n, context, full_lengths);
  std::vector<int> blocks(static_cast<size_t>(batch));
  in.context_lens.resize(static_cast<size_t>(batch) * next_n);
  for (int b = 0; b < batch; ++b) {
    const int L = lens[static_cast<size_t>(b)];
    for (int i = 0; i < next_n; ++i) in.context_lens[static_cast<size_t>(b) * next_n + i] = L - next_n + i + 1;
    blocks[static_cast<size_t>(b)] = (L + block_kv - 1) / block_kv;
  }
  in.bt_stride = (context + block_kv - 1) / block_kv + 1;
  int used = 0;
  for (int n : blocks) used += n;
  in.num_blocks = used + 3;
  in.block_table = make_block_table(rng, blocks, in.bt_stride, in.num_blocks);
  in.q.resize(static_cast<size_t>(batch) * next_n * heads * head_dim);
  for (auto& v : in.q) v = random_e4m3(rng);
  in.kv.resize(static_cast<size_t>(in.num_blocks) * in.block_bytes());
  for (int blk = 0; blk < in.num_blocks; ++blk) {
    uint8_t* base = in.kv.data() + static_cast<size_t>(blk) * in.block_bytes();
    for (size_t e = 0; e < static_cast<size_t>(block_kv) * head_dim; ++e) base[e] = random_e4m3(rng);
    for (int t = 0; t < block_kv; ++t) {
      const float s = static_cast<float>(rng.uniform(0.5, 2.0) / 64.0);  // like amax / 448
      std::memcpy(base + static_cast<size_t>(block_kv) * head_dim + t * 4, &s, 4);
    }
  }
  in.weights.resize(static_cast<size_t>(batch) * next_n * heads);
  for (auto& w : in.weights) w = rng.nonzero(0.05, 1.0);
  return in;
}

MqaBytes mqa_buffer_bytes(int batch, int next_n, int heads, int head_dim, int block_kv, int context,
                          int64_t num_blocks) {
  const uint64_t rows = static_cast<uint64_t>(batch) * static_cast<uint64_t>(next_n);
  const uint64_t logits_stride = static_cast<uint64_t>((context + 255) / 256 * 256 + 256);  // as make_mqa_inputs
  const uint64_t bt_stride = static_cast<uint64_t>((context + block_kv - 1) / block_kv + 1);
  MqaBytes b;
  b.q = rows * static_cast<uint64_t>(heads) * static_cast<uint64_t>(head_dim);
  b.kv = static_cast<uint64_t>(num_blocks) * static_cast<uint64_t>(block_kv) * static_cast<uint64_t>(head_dim + 4);
  b.weights = rows * static_cast<uint64_t>(heads) * 4;
  b.context_lens = rows * 4;
  b.block_table = static_cast<uint64_t>(batch) * bt_stride * 4;
  b.logits = rows * logits_stride * 4;
  return b;
}

MqaBytes mqa_input_bytes(int batch, int next_n, int heads, int head_dim, int block_kv, int context, uint64_t seed,
                         bool full_lengths) {
  Rng rng(seed);
  int64_t blocks = 3;  // as make_mqa_inputs: the spare blocks past the used ones
  for (int L : draw_request_lengths(rng, batch, next_n, context, full_lengths)) blocks += (L + block_kv - 1) / block_kv;
  return mqa_buffer_bytes(batch, next_n, heads, head_dim, block_kv, context, blocks);
}

std::vector<double> mqa_reference_row(const MqaInputs& in, int row) {
  const int b = row / in.next_n;
  const int ctx = in.context_lens[static_cast<size_t>(row)];
  const int D = in.head_dim, H = in.heads;
  float lut[256];
  for (int c = 0; c < 256; ++c) lut[c] = e4m3_to_float(static_cast<uint8_t>(c));
  std::vector<double> out(static_cast<size_t>(ctx));
  std::vector<double> k(static_cast<size_t>(D));
  for (int t = 0; t < ctx; ++t) {
    const int blk = in.block_table[static_cast<size_t>(b) * in.bt_stride + t / in.block_kv];
    const uint8_t* base = in.kv.data() + static_cast<size_t>(blk) * in.block_bytes();
    const uint8_t* kt = base + static_cast<size_t>(t % in.block_kv) * D;
    float scale;
    std::memcpy(&scale, base + static_cast<size_t>(in.block_kv) * D + (t % in.block_kv) * 4, 4);
    for (int d = 0; d < D; ++d) k[static_cast<size_t>(d)] = lut[kt[d]];
    double acc = 0;
    for (int h = 0; h < H; ++h) {
      const uint8_t* q = in.q.data() + (static_cast<size_t>(row) * H + h) * D;
      double dot = 0;
      for (int d = 0; d < D; ++d) dot += static_cast<double>(lut[q[d]]) * k[static_cast<size_t>(d)];
      acc += std::max(dot, 0.0) * in.weights[static_cast<size_t>(row) * H + h];
    }
    out[static_cast<size_t>(t)] = acc * scale;
  }
  return out;
}

ErrorStats check_mqa_logits(const MqaInputs& in, const std::vector<float>& logits, const std::vector<int>& rows_in) {
  std::vector<int> rows = rows_in;
  if (rows.empty())
    for (int r = 0; r < in.batch * in.next_n; ++r) rows.push_back(r);
  ErrorStats st;
  for (int row : rows) {
    const auto ref = mqa_reference_row(in, row);
    const float* o = logits.data() + static_cast<size_t>(row) * in.logits_stride;
    for (int t = 0; t < in.logits_stride; ++t) {
      uint32_t bits;
      std::memcpy(&bits, &o[t], 4);
      if (t < static_cast<int>(ref.size())) {
        if (bits == kPoisonF32) {
          ++st.unwritten;
          continue;
        }
        st.add(o[t], ref[static_cast<size_t>(t)]);
      } else if (bits != kPoisonF32) {
        ++st.out_of_range;
      }
    }
  }
  return st;
}

MqaLaunch mqa_launch_config(int batch, int next_n, int heads, int head_dim, int max_context, int tiles_per_cta) {
  MqaLaunch l;
  const int hc = specprobe_kernels::mqa_head_chunk(heads);
  const int hcn = heads / hc;
  l.kernel = "mqa_logits_d" + std::to_string(head_dim) + "_hc" + std::to_string(hc);
  l.rows_per_cta = std::max(1, std::min(next_n, 8 / hcn));
  l.tasks = l.rows_per_cta * hcn;
  l.token_splits = 1;
  while (l.token_splits * 2 * l.tasks <= 8) l.token_splits *= 2;
  l.tiles_per_cta = tiles_per_cta;
  l.threads = static_cast<unsigned>(32 * l.tasks * l.token_splits);
  l.smem = static_cast<unsigned>(specprobe_kernels::mqa_smem_bytes(head_dim, heads, l.tasks));
  const int tokens_per_cta = kMqaTileTokens * tiles_per_cta;
  l.grid_x = static_cast<unsigned>(std::max(1, (max_context + tokens_per_cta - 1) / tokens_per_cta));
  l.grid_y = static_cast<unsigned>(batch);
  l.grid_z = static_cast<unsigned>((next_n + l.rows_per_cta - 1) / l.rows_per_cta);
  return l;
}

int mqa_rows_per_chunk(int next_n, int heads) {
  // Rows per wgmma (N = rpc * heads <= 256): fewest padded columns, each extra chunk costing
  // about 64 columns of issue and epilogue overhead.
  std::vector<int> cands;
  if (heads == 64)
    cands = {1, 2, 3, 4};
  else if (heads == 128)
    cands = {1, 2};
  else
    cands = {1, 2, 4, 8};
  int best = cands.front();
  long best_cost = -1;
  for (int r : cands) {
    const int chunks = (next_n + r - 1) / r;
    const long cost = static_cast<long>(chunks) * r * heads + chunks * 64L;
    if (best_cost < 0 || cost < best_cost) {
      best_cost = cost;
      best = r;
    }
  }
  return best;
}

MqaWsVariant mqa_ws_variant(int batch, int next_n, int heads, int head_dim, int64_t smem_per_block) {
  // The warp-specialized kernels exist for 64 heads of 128 only (kernels/mqa_logits.cu). Each is
  // modelled as max(floor, chunks x chunk cost), microseconds at B = 256, L = 8192 on an H100
  // (docs/perf/kernels.md#mqa-warp-specialized): four math warpgroups stream the KV at 112 us,
  // three at 124 us, and a 64-token tile's wgmma + epilogue costs 46 us per chunk at N = 64
  // (4 x r1), 79 at N = 128 (4 x r2), 109 at N = 192 (3 x r3) summed over the grid. Ties (both at
  // the streaming floor) go to the least compute, which wins where memory is faster (H200). The
  // model reproduces every measured H100 winner of next_n 1-6: 4 x r1 for 1, 4 x r1 / r2 (a tie,
  // 119.6 / 119.8 us) for 2, 3 x r3 for 3, 5, 6, 4 x r2 for 4. The held-weights kernels
  // (docs/perf/kernels.md#mqa-held-weights) run only where the chunk count is their own: 3 x r2
  // held 2 takes 136.6-138.3 us at next_n 4 on an H100 with paired rows
  // (docs/perf/kernels.md#mqa-paired-rows; 137.9-138.8 without; 69 us per chunk; 4 x r2 151-153),
  // 3 x r3 held 1 122 at next_n 3 against 124.4 unheld (113.3 against 120.0 on an H200), so its
  // floor is 122. A variant whose q of all chunks and a two-stage ring per math warpgroup do not
  // fit is not a candidate; none left (next_n >= 7) means the two-CTA kernel.
  struct Cand {
    int math_wgs, rpc, held;
    double floor_us, chunk_us;
  };
  static constexpr Cand kCands[] = {
      {4, 1, 0, 112, 46}, {4, 2, 0, 112, 79}, {3, 3, 0, 124, 109}, {3, 2, 2, 124, 69}, {3, 3, 1, 122, 104}};
  MqaWsVariant best;
  if (heads != 64 || head_dim != 128) return best;
  std::pair<double, double> best_cost;  // (modelled time, compute part)
  for (const Cand& c : kCands) {
    const int chunks = (next_n + c.rpc - 1) / c.rpc;
    if (c.held > 0 && chunks != c.held) continue;
    if (specprobe_kernels::mqa_tma_smem_bytes(head_dim, heads, c.rpc, next_n, batch, 2, c.math_wgs) > smem_per_block)
      continue;
    const double compute = chunks * c.chunk_us;
    const std::pair<double, double> cost{std::max(c.floor_us, compute), compute};
    if (best.math_wgs == 0 || cost < best_cost) {
      best = {c.math_wgs, c.rpc, c.held};
      best_cost = cost;
    }
  }
  return best;
}

MqaLaunch mqa_tma_launch_config(int batch, int next_n, int heads, int head_dim, int64_t smem_per_sm,
                                int64_t smem_per_block, MqaWsVariant ws) {
  const int math_wgs = ws.math_wgs > 0 ? ws.math_wgs : 1, rpc = ws.math_wgs > 0 ? ws.rpc : 0;
  using specprobe_kernels::kMqaTmaMaxStages;
  using specprobe_kernels::kMqaWsMaxStages;
  using specprobe_kernels::mqa_tma_smem_bytes;
  MqaLaunch l;
  l.rows_per_cta = rpc > 0 ? rpc : mqa_rows_per_chunk(next_n, heads);
  l.math_wgs = math_wgs;
  l.kernel = math_wgs == 1 ? fmt::format("mqa_logits_tma_d{}_h{}_r{}", head_dim, heads, l.rows_per_cta)
                           : fmt::format("mqa_logits_ws{}_d{}_h{}_r{}{}", math_wgs, head_dim, heads, l.rows_per_cta,
                                         ws.held > 0 ? fmt::format("_c{}", ws.held) : "");
  l.tasks = 4;
  l.token_splits = 1;
  l.tiles_per_cta = 0;
  l.threads = static_cast<unsigned>(specprobe_kernels::mqa_tma_threads(math_wgs));
  // Ring depth: the deepest (<= 8) that still lets two CTAs share an SM (1 KB of each CTA's
  // shared memory is reserved by the hardware); else the deepest that fits one CTA. The
  // warp-specialized kernels stop at kMqaWsMaxStages per math warpgroup: deeper rings measured
  // slower on both parts (docs/perf/kernels.md#mqa-ring-depth).
  auto bytes = [&](int st) {
    return static_cast<int64_t>(mqa_tma_smem_bytes(head_dim, heads, l.rows_per_cta, next_n, batch, st, math_wgs));
  };
  const int max_stages = math_wgs == 1 ? kMqaTmaMaxStages : kMqaWsMaxStages;
  int stages = 0;
  if (math_wgs == 1)
    for (int st = max_stages; st >= 2 && stages == 0; --st)
      if (2 * (bytes(st) + 1024) <= smem_per_sm && bytes(st) <= smem_per_block) stages = st;
  for (int st = max_stages; st >= 2 && stages == 0; --st)
    if (bytes(st) <= smem_per_block) stages = st;
  l.stages = stages == 0 ? 2 : stages;
  l.smem = static_cast<unsigned>(bytes(l.stages));
  l.grid_x = 0;  // persistent: the caller sets SMs x resident CTAs per SM
  l.grid_y = 1;
  l.grid_z = 1;
  return l;
}

bool mqa_tma_supported(int cc_major, int cc_minor, int heads, int head_dim, int block_kv) {
  // 64-token tiles: inside one block (block_kv % 64 == 0) or whole blocks whose shared-memory
  // offsets keep the swizzle atom's alignment (block_kv * head_dim % 1024 == 0).
  const bool tiles = block_kv > 0 && (block_kv % 64 == 0 || (64 % block_kv == 0 && block_kv * head_dim % 1024 == 0));
  return cc_major == 9 && cc_minor == 0 && (head_dim == 64 || head_dim == 128) &&
         (heads == 16 || heads == 32 || heads == 64 || heads == 128) && block_kv % 4 == 0 && tiles;
}

double mqa_threshold(const std::string& kernel) {
  return kernel.rfind("mqa_logits_tma_", 0) == 0 || kernel.rfind("mqa_logits_ws", 0) == 0 ? kMqaLogitsMaxRelFp8Tc
                                                                                          : kMqaLogitsMaxRel;
}

MqaQMapGeometry mqa_q_map_geometry(const MqaInputs& in, const MqaLaunch& l) {
  const uint64_t D = static_cast<uint64_t>(in.head_dim), H = static_cast<uint64_t>(in.heads);
  const uint64_t rows = static_cast<uint64_t>(in.batch) * static_cast<uint64_t>(in.next_n);
  MqaQMapGeometry g;
  if (specprobe_kernels::mqa_ws_paired_rows(l.math_wgs, l.rows_per_cta)) {
    g.rank = 4;
    const uint64_t dims[4] = {D, 4, rows, H / 4}, strides[3] = {D, H * D, 4 * D};
    const unsigned box[4] = {static_cast<unsigned>(D), 4, 2, static_cast<unsigned>(H / 4)};
    std::copy(dims, dims + 4, g.dims), std::copy(strides, strides + 3, g.strides), std::copy(box, box + 4, g.box);
  } else {
    g.rank = 2;
    g.dims[0] = D, g.dims[1] = rows * H, g.strides[0] = D;
    g.box[0] = static_cast<unsigned>(D), g.box[1] = static_cast<unsigned>(l.rows_per_cta * in.heads);
  }
  return g;
}

namespace {

// The two CUtensorMaps of the sm_90a kernel (see MqaTmaParams); Error when the driver lacks
// cuTensorMapEncodeTiled or rejects a map.
Status encode_mqa_tensor_maps(GpuSession& s, const MqaInputs& in, const MqaLaunch& l,
                              specprobe_kernels::MqaTmaParams& tp) {
  auto& drv = s.driver();
  if (!drv.api().cuTensorMapEncodeTiled) return environment_error("the driver has no cuTensorMapEncodeTiled");
  const int swz = in.head_dim == 128 ? cu::kTensorMapSwizzle128B : cu::kTensorMapSwizzle64B;
  const unsigned estr[4] = {1, 1, 1, 1};  // element strides, every rank
  {
    const uint64_t dims[3] = {static_cast<uint64_t>(in.head_dim), static_cast<uint64_t>(in.block_kv),
                              static_cast<uint64_t>(in.num_blocks)};
    const uint64_t strides[2] = {static_cast<uint64_t>(in.head_dim), in.block_bytes()};
    const unsigned box[3] = {static_cast<unsigned>(in.head_dim), static_cast<unsigned>(std::min(in.block_kv, 64)), 1};
    SP_CU_TRY(drv, cuTensorMapEncodeTiled(tp.kv_map, cu::kTensorMapDataTypeUint8, 3, reinterpret_cast<void*>(tp.p.kv),
                                          dims, strides, box, estr, 0, swz, cu::kTensorMapL2Promotion256B, 0));
  }
  {
    const MqaQMapGeometry g = mqa_q_map_geometry(in, l);
    SP_CU_TRY(drv,
              cuTensorMapEncodeTiled(tp.q_map, cu::kTensorMapDataTypeUint8, g.rank, reinterpret_cast<void*>(tp.p.q),
                                     g.dims, g.strides, g.box, estr, 0, swz, cu::kTensorMapL2Promotion256B, 0));
  }
  return Ok{};
}

}  // namespace

std::string mqa_shape_problem(const Json& spec) {
  const int n = spec.value("next_n", 0), h = spec.value("heads", 0), d = spec.value("head_dim", 0),
            bkv = spec.value("block_kv", 0);
  if (n < 1 || n > 16) return fmt::format("next_n {} outside 1..16", n);
  if (h != 16 && h != 32 && h != 64 && h != 128) return fmt::format("heads {} not in {{16, 32, 64, 128}}", h);
  if (d != 64 && d != 128) return fmt::format("head_dim {} not in {{64, 128}}", d);
  if (bkv <= 0 || bkv % 4 != 0 || bkv > 4096) return fmt::format("block_kv {} is not a multiple of 4 in 4..4096", bkv);
  return "";
}

ProbeSize mqa_probe_size(const Json& spec) {
  const bool bench = spec.value("bench", false);
  return {spec.value("batch", bench ? 256 : 2), spec.value("context", bench ? 8192 : 300)};
}

Json run_mqa_logits_probe(const Json& spec) {
  if (auto why = mqa_shape_problem(spec); !why.empty())
    return make_result(spec, kSkip, "shape not supported by the probe kernel: " + why);
  // Kernel family (see below): the spec's "kernel", else SPECPROBE_MQA_KERNEL, else auto.
  const char* force = std::getenv("SPECPROBE_MQA_KERNEL");
  const std::string want = !spec.contains("kernel")     ? std::string(force ? force : "auto")
                           : spec["kernel"].is_string() ? spec["kernel"].get<std::string>()
                                                        : spec["kernel"].dump();  // not a string: never a family
  if (want != "auto" && want != "tma" && want != "mma")
    return make_result(spec, kError,
                       fmt::format("MQA kernel family '{}' ({}) is not one of auto, tma, mma", want,
                                   spec.contains("kernel") ? "the spec's \"kernel\"" : "SPECPROBE_MQA_KERNEL"));
  const bool bench = spec.value("bench", false);
  const auto [batch, context] = mqa_probe_size(spec);
  const int next_n = spec.value("next_n", 1), heads = spec.value("heads", 64), head_dim = spec.value("head_dim", 128),
            block_kv = spec.value("block_kv", 64);
  if (auto why = probe_size_problem(batch, context, next_n, "next_n"); !why.empty())
    return make_result(spec, kError, "request set not usable: " + why);
  const uint64_t seed = spec.value("seed", 1);
  const bool full = spec.value("lengths", std::string("random")) == "full";
  const uint64_t need_host = mqa_input_bytes(batch, next_n, heads, head_dim, block_kv, context, seed, full).total();
  if (Json sk = host_memory_skip(spec, need_host, "host memory for the inputs and the downloaded logits");
      !sk.is_null())
    return sk;
  if (probe_kernels_fatbin().empty()) return make_result(spec, kSkip, kNoKernelsReason);
  probe_phase(PhaseWhere::kHost, "generate inputs");
  const MqaInputs in = make_mqa_inputs(batch, next_n, heads, head_dim, block_kv, context, seed, full);
  probe_phase(PhaseWhere::kDevice, "run kernel");
  auto sess = GpuSession::open(probe_kernels_fatbin());
  if (!sess) return session_failure(spec, sess.error());
  GpuSession& s = **sess;
  Json res = make_result(spec, kPass);
  auto fail_cuda = [&](const Error& e) { return cuda_failure(s, spec, e); };
  // Kernel family: the sm_90a copy-engine + wgmma kernel where it applies and fits, else the
  // portable mma.sync one; within sm_90a the warp-specialized kernel where mqa_ws_variant has
  // one for the shape, else the two-CTA one. SPECPROBE_MQA_KERNEL (or the spec's "kernel") =
  // mma | tma (two-CTA) | auto forces a family (benchmarks compare them).
  bool use_tma = want != "mma" &&
                 mqa_tma_supported(s.gpu().cc_major, s.gpu().cc_minor, in.heads, in.head_dim, in.block_kv) &&
                 s.driver().api().cuTensorMapEncodeTiled != nullptr;
  MqaLaunch l;
  if (use_tma) {
    const MqaWsVariant ws =
        want == "tma" ? MqaWsVariant{}
                      : mqa_ws_variant(in.batch, in.next_n, in.heads, in.head_dim, s.gpu().smem_per_block_optin);
    l = mqa_tma_launch_config(in.batch, in.next_n, in.heads, in.head_dim, s.gpu().smem_per_sm,
                              s.gpu().smem_per_block_optin, ws);
    if (static_cast<int64_t>(l.smem) > s.gpu().smem_per_block_optin) use_tma = false;
  }
  if (use_tma) {  // persistent grid: every resident CTA slot once
    auto fw = s.function(l.kernel);
    if (!fw) return fail_cuda(fw.error());
    const Json ev = s.kernel_evidence(*fw, l.kernel, LaunchShape{1, 1, 1, l.threads, l.smem});
    const int per_sm = std::max(1, ev.value("occupancy_blocks_per_sm", 1));
    l.grid_x = static_cast<unsigned>(std::max<int64_t>(1, s.gpu().sm_count) * per_sm);
  }
  if (!use_tma)
    l = mqa_launch_config(in.batch, in.next_n, in.heads, in.head_dim, in.max_context, spec.value("tiles_per_cta", 4));
  if (Json sk = smem_skip(s, spec, l.smem); !sk.is_null()) return sk;
  auto f = s.function(l.kernel);
  if (!f) return fail_cuda(f.error());
  const uint64_t need_device =
      mqa_buffer_bytes(batch, next_n, heads, head_dim, block_kv, context, in.num_blocks).total();
  if (Json sk = device_memory_skip(s, spec, need_device); !sk.is_null()) return sk;
  const size_t logits_elems = static_cast<size_t>(in.batch) * in.next_n * in.logits_stride;
  auto d_q = s.alloc(in.q.size());
  auto d_kv = s.alloc(in.kv.size());
  auto d_w = s.alloc(in.weights.size() * 4);
  auto d_ctx = s.alloc(in.context_lens.size() * 4);
  auto d_bt = s.alloc(in.block_table.size() * 4);
  auto d_out = s.alloc(logits_elems * 4);
  for (auto* a : {&d_q, &d_kv, &d_w, &d_ctx, &d_bt, &d_out})
    if (!*a) return fail_cuda(a->error());
  for (auto st :
       {s.upload(*d_q, in.q.data(), in.q.size()), s.upload(*d_kv, in.kv.data(), in.kv.size()),
        s.upload(*d_w, in.weights.data(), in.weights.size() * 4),
        s.upload(*d_ctx, in.context_lens.data(), in.context_lens.size() * 4),
        s.upload(*d_bt, in.block_table.data(), in.block_table.size() * 4), s.fill32(*d_out, kPoisonF32, logits_elems)})
    if (!st) return fail_cuda(st.error());
  specprobe_kernels::MqaLogitsParams p{};
  p.q = *d_q;
  p.kv = *d_kv;
  p.weights = *d_w;
  p.context_lens = *d_ctx;
  p.block_table = *d_bt;
  p.logits = *d_out;
  p.batch = in.batch;
  p.next_n = in.next_n;
  p.heads = in.heads;
  p.block_kv = in.block_kv;
  p.block_table_stride = in.bt_stride;
  p.logits_stride = in.logits_stride;
  p.rows_per_cta = l.rows_per_cta;
  p.token_splits = l.token_splits;
  p.tiles_per_cta = l.tiles_per_cta;
  LaunchShape shape{l.grid_x, l.grid_y, l.grid_z, l.threads, l.smem};
  specprobe_kernels::MqaTmaParams tp{};
  void* params = &p;
  if (use_tma) {
    tp.p = p;
    tp.stages = l.stages;
    if (auto st = encode_mqa_tensor_maps(s, in, l, tp); !st) return fail_cuda(st.error());
    params = &tp;
  }
  if (auto st = s.launch(*f, shape, params); !st) return fail_cuda(st.error());
  if (auto st = s.sync(); !st) return fail_cuda(st.error());
  std::vector<float> out(logits_elems);
  if (auto st = s.download(out.data(), *d_out, logits_elems * 4); !st) return fail_cuda(st.error());
  std::vector<int> rows;  // bench: the first and last request's rows (the last has the full context)
  if (bench)
    for (int b : {0, in.batch - 1})
      for (int i = 0; i < in.next_n; ++i) rows.push_back(b * in.next_n + i);
  probe_phase(PhaseWhere::kHost, "check against the CPU reference");
  const ErrorStats err = check_mqa_logits(in, out, rows);
  res["metrics"] = err.json();
  const double limit = mqa_threshold(l.kernel);
  res["metrics"]["threshold_max_rel_err"] = limit;
  res["evidence"] = s.kernel_evidence(*f, l.kernel, shape);
  res["evidence"]["gpu"] = s.gpu().name;
  if (use_tma) res["evidence"]["stages"] = l.stages;
  if (err.unwritten || err.nonfinite || err.out_of_range || !(err.max_rel() <= limit)) {
    res["status"] = kFail;
    res["reason"] =
        fmt::format("max rel err {:.3g} (limit {:.0e}), {} unwritten, {} non-finite, {} out-of-range writes",
                    err.max_rel(), limit, err.unwritten, err.nonfinite, err.out_of_range);
  }
  if (spec.value("time", bench)) {
    probe_phase(PhaseWhere::kDevice, "time kernel");
    auto ms = s.time_median_ms([&] { return s.launch(*f, shape, params); }, bench ? 5 : 3, bench ? 50 : 20);
    if (!ms) return fail_cuda(ms.error());
    double bytes = 0;
    for (int b = 0; b < in.batch; ++b) {
      const int L = in.context_lens[static_cast<size_t>(b) * in.next_n + in.next_n - 1];
      bytes += static_cast<double>((L + in.block_kv - 1) / in.block_kv) * static_cast<double>(in.block_bytes());
      for (int i = 0; i < in.next_n; ++i) bytes += 4.0 * in.context_lens[static_cast<size_t>(b) * in.next_n + i];
    }
    bytes += static_cast<double>(in.q.size() + in.weights.size() * 4);
    res["metrics"]["time_us_median"] = *ms * 1e3;
    res["metrics"]["roofline_bytes"] = bytes;
    res["metrics"]["achieved_bytes_per_s"] = bytes / (*ms * 1e-3);
    if (bench) {
      auto ceiling = s.copy_ceiling_bytes_per_s(size_t{2} << 30);
      if (ceiling) {
        res["metrics"]["copy_ceiling_bytes_per_s"] = *ceiling;
        res["metrics"]["pct_of_roofline"] = 100.0 * bytes / (*ms * 1e-3) / *ceiling;
      }
    }
  }
  return res;
}

namespace {

// auto: the plan's next_n (DSA models: model.dsa.index_n_heads); all: next_n 1..8 as well.
std::vector<Json> mqa_logits_plan_specs(const Json& facts, const std::string& mode) {
  std::vector<Json> specs;
  const auto idx_heads = int_fact(facts, "model.dsa.index_n_heads");
  if (!idx_heads) return specs;
  const int next_n = static_cast<int>(int_fact(facts, "spec.next_n").value_or(1));
  const int d = static_cast<int>(int_fact(facts, "model.dsa.index_head_dim").value_or(128));
  std::set<int> ns = {std::clamp(next_n, 1, 16)};
  if (mode == "all")
    for (int n = 1; n <= 8; ++n) ns.insert(n);
  for (int n : ns)
    specs.push_back({{"probe", "mqa_logits"},
                     {"next_n", n},
                     {"heads", *idx_heads},
                     {"head_dim", d},
                     {"block_kv", 64},
                     {"batch", 2},
                     {"context", 200},
                     {"seed", 1}});
  return specs;
}

Expected<std::vector<Json>> mqa_logits_option_specs(const ProbeShapeOptions& o, const CommonSpec& common) {
  auto ns = parse_int_list(o.next_n);
  if (!ns) return ns.error();
  std::vector<Json> specs;
  for (int h : o.heads)
    for (int d : o.head_dim)
      for (int bkv : o.block_kv)
        for (int n : *ns) {
          Json s = common({{"probe", "mqa_logits"}, {"next_n", n}, {"heads", h}, {"head_dim", d}, {"block_kv", bkv}});
          if (o.tiles_per_cta > 0) s["tiles_per_cta"] = o.tiles_per_cta;
          if (!o.lengths.empty()) s["lengths"] = o.lengths;
          if (n >= 1)  // other next_n values are shapes the kernel lacks: a skip, not a usage error
            if (auto st = check_probe_size(mqa_probe_size(s), n, "next_n"); !st) return st.error();
          specs.push_back(s);
        }
  return specs;
}

// probe.mqa_logits.next_n.<n>.status / .reason, probe.mqa_logits.max_native_next_n; each answers
// for DSA plans whose kernel sees that next_n (dsa.kernel_next_n).
void mqa_logits_record(const std::vector<Json>& results, Json& facts) {
  std::map<int, std::string> by_n;
  for (const auto& r : results) {
    const int n = r.value("spec", Json::object()).value("next_n", 0);
    const std::string status = r.value("status", "error");
    const std::string key = fmt::format("probe.mqa_logits.next_n.{}", n);
    set_fact(facts, key + ".status", status);
    if (!r.value("reason", "").empty()) set_fact(facts, key + ".reason", r["reason"]);
    by_n[n] = status;
    append_answer(facts, r, fmt::format("paged MQA logits at next_n={}", n), key,
                  {{"model.dsa.present", true}, {"dsa.kernel_next_n", n}});
  }
  if (by_n.empty()) return;
  // Highest n such that every tested n' <= n passed (null when the smallest failed).
  Json best = nullptr;
  for (const auto& [n, st] : by_n) {
    if (st != kPass) break;
    best = n;
  }
  set_fact(facts, "probe.mqa_logits.max_native_next_n", best);
}

}  // namespace

const ProbeKind kMqaLogitsProbe = {"mqa_logits",
                                   "paged MQA logits (DSA indexer) for one next_n / heads / head_dim / block_kv",
                                   run_mqa_logits_probe,
                                   mqa_logits_plan_specs,
                                   mqa_logits_option_specs,
                                   mqa_logits_record};

}  // namespace specprobe::probes
