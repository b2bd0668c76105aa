// Host side of the spec-verify attention probe and the CUDA-graph replay probe (spec_verify.hpp).
#include "probes/spec_verify.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <numeric>

#include "facts/answers.hpp"
#include "gpu/cuda_session.hpp"
#include "probes/mla_verify.hpp"
#include "probes/probe_gpu.hpp"

namespace specprobe::probes {

SpecVerifyInputs make_spec_verify_inputs(int batch, int k, int gqa, int heads_kv, int head_dim, bool fp8,
                                         int block_size, int context, uint64_t seed) {
  Rng rng(seed);
  SpecVerifyInputs in;
  in.batch = batch;
  in.num_q = k + 1;
  in.heads_kv = heads_kv;
  in.heads_q = heads_kv * gqa;
  in.head_dim = head_dim;
  in.block_size = block_size;
  in.fp8 = fp8;
  in.k_scale = fp8 ? 0.5f : 1.f;  // powers of two: dequantised values stay exact in bf16
  in.v_scale = fp8 ? 0.25f : 1.f;
  PagedRequests paged = make_paged_requests(rng, batch, in.num_q, context, block_size);
  in.seq_lens = std::move(paged.seq_lens);
  in.block_table = std::move(paged.block_table);
  in.bt_stride = paged.bt_stride;
  in.num_blocks = paged.num_blocks;
  in.q.resize(in.out_elems());
  for (auto& v : in.q) v = float_to_bf16(rng.nonzero(0.1, 1.0));
  const size_t elems = static_cast<size_t>(in.num_blocks) * block_size * heads_kv * head_dim;
  const size_t eb = fp8 ? 1 : 2;
  in.k_cache.resize(elems * eb);
  in.v_cache.resize(elems * eb);
  for (auto* cache : {&in.k_cache, &in.v_cache}) {
    if (fp8) {
      for (auto& v : *cache) v = random_e4m3(rng);
    } else {
      for (size_t e = 0; e < elems; ++e) {
        const uint16_t v = float_to_bf16(rng.nonzero(0.1, 1.0));
        std::memcpy(cache->data() + 2 * e, &v, 2);
      }
    }
  }
  return in;
}

namespace {

SpecVerifyBytes buffer_bytes(int batch, int num_q, int heads_q, int heads_kv, int head_dim, bool fp8, int block_size,
                             int64_t bt_stride, int64_t num_blocks, int num_splits) {
  const uint64_t rows_out =
      static_cast<uint64_t>(batch) * static_cast<uint64_t>(num_q) * static_cast<uint64_t>(heads_q);
  SpecVerifyBytes b;
  b.q = rows_out * static_cast<uint64_t>(head_dim) * 2;
  b.caches = 2 * static_cast<uint64_t>(num_blocks) * static_cast<uint64_t>(block_size) *
             static_cast<uint64_t>(heads_kv) * static_cast<uint64_t>(head_dim) * (fp8 ? 1 : 2);
  b.block_table = static_cast<uint64_t>(batch) * static_cast<uint64_t>(bt_stride) * 4;
  b.seq_lens = static_cast<uint64_t>(batch) * 4;
  b.out = b.q;
  const uint64_t splits = static_cast<uint64_t>(std::max(num_splits, 0));
  b.partials =
      splits > 1 ? splits * rows_out * (static_cast<uint64_t>(head_dim) + 1) * 4 : 32;  // as upload_spec_verify
  return b;
}

}  // namespace

SpecVerifyBytes spec_verify_input_bytes(int batch, int k, int gqa, int heads_kv, int head_dim, bool fp8, int block_size,
                                        int context, uint64_t seed) {
  Rng rng(seed);
  const PagedRequests paged = make_paged_requests(rng, batch, k + 1, context, block_size, false);
  return buffer_bytes(batch, k + 1, heads_kv * gqa, heads_kv, head_dim, fp8, block_size, paged.bt_stride,
                      paged.num_blocks, 0);
}

SpecVerifyBytes spec_verify_buffer_bytes(const SpecVerifyInputs& in, int num_splits) {
  return buffer_bytes(in.batch, in.num_q, in.heads_q, in.heads_kv, in.head_dim, in.fp8, in.block_size, in.bt_stride,
                      in.num_blocks, num_splits);
}

namespace {

float cache_value(const SpecVerifyInputs& in, const std::vector<uint8_t>& cache, size_t idx, float scale) {
  if (in.fp8) return bf16_to_float(float_to_bf16(e4m3_to_float(cache[idx]) * scale));
  uint16_t v;
  std::memcpy(&v, cache.data() + 2 * idx, 2);
  return bf16_to_float(v);
}

}  // namespace

size_t spec_verify_cache_offset(const SpecVerifyInputs& in, int b, int t, int kvh) {
  const int blk = in.block_table[static_cast<size_t>(b) * in.bt_stride + t / in.block_size];
  return ((static_cast<size_t>(blk) * in.block_size + t % in.block_size) * in.heads_kv + kvh) * in.head_dim;
}

std::vector<double> spec_verify_scores(const SpecVerifyInputs& in, int b, int j, int hq) {
  const int D = in.head_dim, kvh = hq / (in.heads_q / in.heads_kv);
  const int pos = in.seq_lens[static_cast<size_t>(b)] - in.num_q + j;
  const double scale = 1.0 / std::sqrt(static_cast<double>(D));
  const uint16_t* q = in.q.data() + ((static_cast<size_t>(b) * in.num_q + j) * in.heads_q + hq) * D;
  std::vector<double> s(static_cast<size_t>(pos + 1));
  for (int t = 0; t <= pos; ++t) {
    const size_t base = spec_verify_cache_offset(in, b, t, kvh);
    double dot = 0;
    for (int d = 0; d < D; ++d)
      dot += bf16_to_float(q[d]) * static_cast<double>(cache_value(in, in.k_cache, base + d, 1.f));
    s[static_cast<size_t>(t)] = dot * scale * in.k_scale;
  }
  return s;
}

std::vector<double> spec_verify_reference(const SpecVerifyInputs& in, int b, int j, int hq) {
  const int D = in.head_dim, kvh = hq / (in.heads_q / in.heads_kv);
  const std::vector<double> s = spec_verify_scores(in, b, j, hq);
  const int pos = static_cast<int>(s.size()) - 1;
  const double mx = s.empty() ? 0.0 : *std::max_element(s.begin(), s.end());
  double den = 0;
  std::vector<double> out(static_cast<size_t>(D), 0.0);
  for (int t = 0; t <= pos; ++t) {
    const double p = std::exp(s[static_cast<size_t>(t)] - mx);
    den += p;
    const size_t base = spec_verify_cache_offset(in, b, t, kvh);
    for (int d = 0; d < D; ++d) out[static_cast<size_t>(d)] += p * cache_value(in, in.v_cache, base + d, in.v_scale);
  }
  for (auto& v : out) v /= den;
  return out;
}

ErrorStats check_spec_verify(const SpecVerifyInputs& in, const std::vector<uint16_t>& out,
                             const std::vector<int>& requests) {
  ErrorStats st;
  for (int b : requests_or_all(requests, in.batch))
    for (int j = 0; j < in.num_q; ++j)
      for (int h = 0; h < in.heads_q; ++h) {
        const auto ref = spec_verify_reference(in, b, j, h);
        st.add_bf16(out.data() + ((static_cast<size_t>(b) * in.num_q + j) * in.heads_q + h) * in.head_dim, ref.data(),
                    static_cast<size_t>(in.head_dim));
      }
  return st;
}

bool spec_verify_passes(const ErrorStats& e) {
  return e.unwritten == 0 && e.nonfinite == 0 && e.norm_rel() <= kSpecVerifyNormRel && e.max_rel() <= kSpecVerifyMaxRel;
}

SpecVerifyLaunch spec_verify_launch_config(const SpecVerifyInputs& in, int num_splits, int sm_count, int smem_limit,
                                           bool copy_engine) {
  SpecVerifyLaunch l;
  const int rows = in.num_q * (in.heads_q / in.heads_kv);
  l.rows_per_cta = rows <= 16 ? 16 : 32;
  l.kernel = fmt::format("spec_verify_d{}_{}_r{}", in.head_dim, in.fp8 ? "fp8" : "bf16", l.rows_per_cta);
  l.grid_y = static_cast<unsigned>(in.batch * in.heads_kv);
  l.grid_z = static_cast<unsigned>((rows + l.rows_per_cta - 1) / l.rows_per_cta);
  l.stages = specprobe_kernels::spec_verify_stages(in.head_dim, in.fp8, l.rows_per_cta, smem_limit);
  l.smem = static_cast<unsigned>(
      specprobe_kernels::spec_verify_smem_bytes_stages(in.head_dim, in.fp8, l.rows_per_cta, l.stages));
  const int tn = specprobe_kernels::spec_verify_tile_tokens(in.head_dim, l.rows_per_cta);
  if (const int bt = std::gcd(tn, in.block_size); copy_engine && !in.fp8 && bt >= 8) {
    constexpr int st = specprobe_kernels::kSpecVerifyTmaStages;
    const int bytes = specprobe_kernels::spec_verify_tma_smem_bytes(in.head_dim, l.rows_per_cta, st);
    if (bytes <= smem_limit) {
      l.kernel += "_tma";
      l.box_tokens = bt;
      l.stages = st;
      l.smem = static_cast<unsigned>(bytes);
    }
  }
  const int max_len = *std::max_element(in.seq_lens.begin(), in.seq_lens.end());
  const int max_tiles = std::max(1, (max_len + tn - 1) / tn);
  if (num_splits > 0) {
    l.tiles_per_split = (max_tiles + num_splits - 1) / num_splits;
  } else {
    long long total = 0;
    for (int L : in.seq_lens) total += (L + tn - 1) / tn;
    total *= static_cast<long long>(l.grid_y / std::max(in.batch, 1)) * l.grid_z;
    const long long target = 12LL * std::max(sm_count, 1);
    const int tps = static_cast<int>(std::clamp<long long>((total + target - 1) / target, 4, max_tiles));
    // As many splits as that size needs, then equal shares: 128 tiles at 42 per split would leave
    // a 2-tile fourth split (measured: 4 x 32 tiles is 1% faster than 3 x 42 + 2 on an H100).
    const int splits = (max_tiles + tps - 1) / tps;
    l.tiles_per_split = (max_tiles + splits - 1) / splits;
  }
  const int cap_tiles = std::max(max_tiles, (in.bt_stride * in.block_size + tn - 1) / tn);
  l.num_splits = (cap_tiles + l.tiles_per_split - 1) / l.tiles_per_split;
  l.grid_x = static_cast<unsigned>(l.num_splits);
  return l;
}

ProbeSize spec_verify_probe_size(const Json& spec) {
  const bool bench = spec.value("bench", false);
  return {spec.value("batch", bench ? 64 : 2), spec.value("context", bench ? 8192 : 300)};
}

std::string spec_verify_shape_problem(const Json& spec) {
  const int k = spec.value("k", 0), gqa = spec.value("gqa", 0), d = spec.value("head_dim", 0),
            bs = spec.value("block_size", 0);
  const std::string dt = spec.value("kv_dtype", "bf16");
  if (k < 0 || k > 15) return fmt::format("k {} outside 0..15", k);
  if (gqa < 1 || gqa > 16) return fmt::format("gqa {} outside 1..16", gqa);
  if (d != 64 && d != 128 && d != 256) return fmt::format("head_dim {} not in {{64, 128, 256}}", d);
  if (bs < 1 || bs > 4096) return fmt::format("block_size {} outside 1..4096", bs);
  if (const int hkv = spec.value("heads_kv", 2); hkv < 1 || hkv > 128)
    return fmt::format("heads_kv {} outside 1..128", hkv);
  if (dt != "bf16" && dt != "fp8") return "kv_dtype " + dt + " not in {bf16, fp8}";
  return "";
}

namespace {

// The K and V maps of the copy-engine variant: uint8 {head_dim * 2, heads_kv, block_size,
// num_blocks}, one box = 128 bytes of one head's row for box_tokens tokens of one block,
// 128-byte swizzle (the layout spec_verify.cu's `at` reads back).
Status encode_spec_verify_tensor_maps(GpuSession& s, const SpecVerifyInputs& in,
                                      specprobe_kernels::SpecVerifyTmaParams& tp) {
  auto& drv = s.driver();
  const uint64_t row = static_cast<uint64_t>(in.head_dim) * 2;
  const uint64_t dims[4] = {row, static_cast<uint64_t>(in.heads_kv), static_cast<uint64_t>(in.block_size),
                            static_cast<uint64_t>(in.num_blocks)};
  const uint64_t strides[3] = {row, row * in.heads_kv, row * in.heads_kv * in.block_size};
  const unsigned box[4] = {128, 1, static_cast<unsigned>(tp.box_tokens), 1};
  const unsigned estr[4] = {1, 1, 1, 1};
  SP_CU_TRY(
      drv, cuTensorMapEncodeTiled(tp.k_map, cu::kTensorMapDataTypeUint8, 4, reinterpret_cast<void*>(tp.p.k_cache), dims,
                                  strides, box, estr, 0, cu::kTensorMapSwizzle128B, cu::kTensorMapL2Promotion256B, 0));
  SP_CU_TRY(
      drv, cuTensorMapEncodeTiled(tp.v_map, cu::kTensorMapDataTypeUint8, 4, reinterpret_cast<void*>(tp.p.v_cache), dims,
                                  strides, box, estr, 0, cu::kTensorMapSwizzle128B, cu::kTensorMapL2Promotion256B, 0));
  return Ok{};
}

}  // namespace

Expected<SpecVerifyDevice> upload_spec_verify(GpuSession& s, const SpecVerifyInputs& in, int num_splits,
                                              bool allow_copy_engine) {
  SpecVerifyDevice dev;
  const bool copy_engine =
      allow_copy_engine && s.gpu().cc_major >= 9 && s.driver().api().cuTensorMapEncodeTiled != nullptr;
  dev.launch = spec_verify_launch_config(in, num_splits, s.gpu().sm_count,
                                         static_cast<int>(s.gpu().smem_per_block_optin), copy_engine);
  auto& p = dev.params;
  const size_t rows_out = static_cast<size_t>(in.batch) * in.num_q * in.heads_q;
  auto up = [&](const void* data, size_t bytes) { return upload_buffer(s, data, bytes); };
  auto q = up(in.q.data(), in.q.size() * 2);
  auto kc = up(in.k_cache.data(), in.k_cache.size());
  auto vc = up(in.v_cache.data(), in.v_cache.size());
  auto bt = up(in.block_table.data(), in.block_table.size() * 4);
  auto sl = up(in.seq_lens.data(), in.seq_lens.size() * 4);
  auto out = up(nullptr, in.out_elems() * 2);
  const size_t splits = static_cast<size_t>(dev.launch.num_splits);
  auto po = up(nullptr, splits > 1 ? splits * rows_out * in.head_dim * 4 : 16);
  auto pl = up(nullptr, splits > 1 ? splits * rows_out * 4 : 16);
  for (auto* a : {&q, &kc, &vc, &bt, &sl, &out, &po, &pl})
    if (!*a) return a->error();
  if (auto st = poison_bf16(s, *out, in.out_elems()); !st) return st.error();
  p.q = *q;
  p.k_cache = *kc;
  p.v_cache = *vc;
  p.block_table = *bt;
  p.seq_lens = *sl;
  p.out = *out;
  p.partial_o = *po;
  p.partial_lse = *pl;
  p.batch = in.batch;
  p.num_q = in.num_q;
  p.heads_q = in.heads_q;
  p.heads_kv = in.heads_kv;
  p.block_size = in.block_size;
  p.block_table_stride = in.bt_stride;
  p.num_splits = dev.launch.num_splits;
  p.rows_per_cta = dev.launch.rows_per_cta;
  p.tiles_per_split = dev.launch.tiles_per_split;
  p.stages = dev.launch.stages;
  p.sm_scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(in.head_dim)));
  p.k_scale = in.k_scale;
  p.v_scale = in.v_scale;
  dev.combine.partial_o = *po;
  dev.combine.partial_lse = *pl;
  dev.combine.out = *out;
  dev.combine.rows = static_cast<int>(rows_out);
  dev.combine.head_dim = in.head_dim;
  dev.combine.num_splits = dev.launch.num_splits;
  dev.combine.seq_lens = *sl;
  dev.combine.rows_per_request = in.num_q * in.heads_q;
  dev.combine.tile_tokens = specprobe_kernels::spec_verify_tile_tokens(in.head_dim, dev.launch.rows_per_cta);
  dev.combine.tiles_per_split = dev.launch.tiles_per_split;
  if (dev.launch.box_tokens > 0) {
    dev.tma.p = p;
    dev.tma.box_tokens = dev.launch.box_tokens;
    if (auto st = encode_spec_verify_tensor_maps(s, in, dev.tma); !st) return st.error();
  }
  dev.d_seq_lens = *sl;
  dev.d_block_table = *bt;
  dev.d_out = *out;
  dev.d_q = *q;
  return dev;
}

Status launch_spec_verify(GpuSession& s, const SpecVerifyDevice& dev) {
  auto f = s.function(dev.launch.kernel);
  if (!f) return f.error();
  const auto& l = dev.launch;
  auto params = dev.params;
  auto tma = dev.tma;
  void* arg = l.box_tokens > 0 ? static_cast<void*>(&tma) : static_cast<void*>(&params);
  if (auto st = s.launch(*f, LaunchShape{l.grid_x, l.grid_y, l.grid_z, l.threads, l.smem}, arg); !st) return st;
  if (l.num_splits > 1) {
    auto c = s.function("spec_verify_combine");
    if (!c) return c.error();
    auto cp = dev.combine;
    return s.launch(*c, LaunchShape{static_cast<unsigned>(dev.combine.rows), 1, 1, 128, 0}, &cp);
  }
  return Ok{};
}

namespace {

// Kernel family: the spec's "kernel", else SPECPROBE_SV_KERNEL, else auto (the copy-engine
// variant where spec_verify_launch_config takes it). cp_async forces the portable kernel, so a
// Hopper run can still measure and check it. Sets `copy_engine`; an error message otherwise.
std::string spec_verify_family(const Json& spec, bool& copy_engine) {
  const char* force = std::getenv("SPECPROBE_SV_KERNEL");
  const std::string want = !spec.contains("kernel")     ? std::string(force ? force : "auto")
                           : spec["kernel"].is_string() ? spec["kernel"].get<std::string>()
                                                        : spec["kernel"].dump();  // not a string: never a family
  copy_engine = want == "auto";
  if (want == "auto" || want == "cp_async") return "";
  return fmt::format("spec-verify kernel family '{}' ({}) is not one of auto, cp_async", want,
                     spec.contains("kernel") ? "the spec's \"kernel\"" : "SPECPROBE_SV_KERNEL");
}

SpecVerifyInputs inputs_from_spec(const Json& spec, uint64_t seed_offset = 0) {
  const bool bench = spec.value("bench", false);
  const auto [batch, context] = spec_verify_probe_size(spec);
  return make_spec_verify_inputs(batch, spec.value("k", 3), spec.value("gqa", 8), spec.value("heads_kv", bench ? 8 : 2),
                                 spec.value("head_dim", 128), spec.value("kv_dtype", "bf16") == "fp8",
                                 spec.value("block_size", 16), context, spec.value("seed", 1) + seed_offset);
}

// Before any input is generated: the request set's limits (error) and the host memory that
// `input_sets` input sets and `outputs` downloaded outputs take (skip). Null when both are fine.
Json host_precheck(const Json& spec, int input_sets, int outputs) {
  const bool bench = spec.value("bench", false);
  const auto [batch, context] = spec_verify_probe_size(spec);
  const int k = spec.value("k", 3);
  if (auto why = probe_size_problem(batch, context, k + 1, "k + 1"); !why.empty())
    return make_result(spec, kError, "request set not usable: " + why);
  const SpecVerifyBytes b = spec_verify_input_bytes(
      batch, k, spec.value("gqa", 8), spec.value("heads_kv", bench ? 8 : 2), spec.value("head_dim", 128),
      spec.value("kv_dtype", "bf16") == "fp8", spec.value("block_size", 16), context, spec.value("seed", 1));
  const uint64_t need = b.inputs() * static_cast<uint64_t>(input_sets) + b.out * static_cast<uint64_t>(outputs);
  return host_memory_skip(spec, need, "host memory for the inputs and the downloaded outputs");
}

// Before upload_spec_verify allocates: its buffers against the device's free memory (skip).
Json device_precheck(const Json& spec, GpuSession& s, const SpecVerifyInputs& in, int num_splits) {
  const SpecVerifyLaunch l =
      spec_verify_launch_config(in, num_splits, s.gpu().sm_count, static_cast<int>(s.gpu().smem_per_block_optin));
  return device_memory_skip(s, spec, spec_verify_buffer_bytes(in, l.num_splits).device());
}

}  // namespace

Json run_spec_verify_probe(const Json& spec) {
  if (auto why = spec_verify_shape_problem(spec); !why.empty())
    return make_result(spec, kSkip, "shape not supported by the probe kernel: " + why);
  bool copy_engine = true;
  if (auto why = spec_verify_family(spec, copy_engine); !why.empty()) return make_result(spec, kError, why);
  const bool bench = spec.value("bench", false);
  if (Json r = host_precheck(spec, 1, 1); !r.is_null()) return r;
  if (probe_kernels_fatbin().empty()) return make_result(spec, kSkip, kNoKernelsReason);
  probe_phase(PhaseWhere::kHost, "generate inputs");
  const SpecVerifyInputs in = inputs_from_spec(spec);
  probe_phase(PhaseWhere::kDevice, "run kernel");
  auto sess = GpuSession::open(probe_kernels_fatbin());
  if (!sess) return session_failure(spec, sess.error());
  GpuSession& s = **sess;
  if (Json r = device_precheck(spec, s, in, spec.value("splits", 0)); !r.is_null()) return r;
  auto dev = upload_spec_verify(s, in, spec.value("splits", 0), copy_engine);
  if (!dev) return cuda_failure(s, spec, dev.error());
  if (Json sk = smem_skip(s, spec, dev->launch.smem); !sk.is_null()) return sk;
  std::vector<uint16_t> out(in.out_elems());
  if (auto st = launch_and_download(
          s, [&] { return launch_spec_verify(s, *dev); }, dev->d_out, out);
      !st)
    return cuda_failure(s, spec, st.error());
  probe_phase(PhaseWhere::kHost, "check against the CPU reference");
  const ErrorStats err = check_spec_verify(in, out, bench ? std::vector<int>{0, in.batch - 1} : std::vector<int>{});
  Json res = comparison_result(spec, err, spec_verify_passes(err), kSpecVerifyNormRel, kSpecVerifyMaxRel);
  res["metrics"]["num_splits"] = dev->launch.num_splits;
  res["metrics"]["tiles_per_split"] = dev->launch.tiles_per_split;
  res["metrics"]["stages"] = dev->launch.stages;
  const auto& l = dev->launch;
  if (auto f = s.function(l.kernel))
    res["evidence"] = s.kernel_evidence(*f, l.kernel, LaunchShape{l.grid_x, l.grid_y, l.grid_z, l.threads, l.smem});
  res["evidence"]["gpu"] = s.gpu().name;
  if (spec.value("time", bench)) {
    probe_phase(PhaseWhere::kDevice, "time kernel");
    auto ms = s.time_median_ms([&] { return launch_spec_verify(s, *dev); }, bench ? 5 : 3, bench ? 50 : 20);
    if (!ms) return cuda_failure(s, spec, ms.error());
    double bytes = static_cast<double>(in.q.size() * 2 + in.out_elems() * 2);
    const size_t eb = in.fp8 ? 1 : 2;
    for (int L : in.seq_lens) bytes += 2.0 * L * in.heads_kv * in.head_dim * static_cast<double>(eb);
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

Json run_graph_replay_probe(const Json& spec) {
  if (auto why = spec_verify_shape_problem(spec); !why.empty())
    return make_result(spec, kSkip, "shape not supported by the probe kernel: " + why);
  bool copy_engine = true;
  if (auto why = spec_verify_family(spec, copy_engine); !why.empty()) return make_result(spec, kError, why);
  // About two input sets live at once (the second step's, drawn with other lengths, is generated
  // while the first's caches are still held), and four downloaded outputs (eager and replayed,
  // both steps); the estimate counts the first step's set twice.
  if (Json r = host_precheck(spec, 2, 4); !r.is_null()) return r;
  if (probe_kernels_fatbin().empty()) return make_result(spec, kSkip, kNoKernelsReason);
  probe_phase(PhaseWhere::kHost, "generate inputs");
  const SpecVerifyInputs a = inputs_from_spec(spec);
  probe_phase(PhaseWhere::kDevice, "capture and replay");
  auto sess = GpuSession::open(probe_kernels_fatbin());
  if (!sess) return session_failure(spec, sess.error());
  GpuSession& s = **sess;
  if (Json r = device_precheck(spec, s, a, spec.value("splits", 2)); !r.is_null()) return r;
  // Splits > 1 so the graph holds two dependent launches (main + combine).
  auto dev = upload_spec_verify(s, a, spec.value("splits", 2), copy_engine);
  if (!dev) return cuda_failure(s, spec, dev.error());
  if (Json sk = smem_skip(s, spec, dev->launch.smem); !sk.is_null()) return sk;
  cu::Driver& d = s.driver();
  cu::CUgraph graph = nullptr;
  cu::CUgraphExec exec = nullptr;
  auto fail = [&](const Error& e) { return cuda_failure(s, spec, e); };
  // Capture (no execution happens during capture).
  if (auto st = SP_CU(d, cuStreamBeginCapture(s.stream(), cu::kStreamCaptureModeThreadLocal)); !st)
    return fail(st.error());
  Status launched = launch_spec_verify(s, *dev);
  if (auto st = SP_CU(d, cuStreamEndCapture(s.stream(), &graph)); !st) return fail(st.error());
  if (!launched) return fail(launched.error());
  if (auto st = SP_CU(d, cuGraphInstantiateWithFlags(&exec, graph, 0)); !st) return fail(st.error());
  std::vector<uint16_t> eager(a.out_elems()), replay(a.out_elems());
  auto run_both = [&](const SpecVerifyInputs& in, std::vector<uint16_t>& e, std::vector<uint16_t>& r) -> Status {
    SP_CU_TRY(d, cuGraphLaunch(exec, s.stream()));
    if (auto st = s.sync(); !st) return st;
    if (auto st = s.download(r.data(), dev->d_out, r.size() * 2); !st) return st;
    if (auto st = poison_bf16(s, dev->d_out, in.out_elems()); !st) return st;
    if (auto st = launch_spec_verify(s, *dev); !st) return st;
    if (auto st = s.sync(); !st) return st;
    return s.download(e.data(), dev->d_out, e.size() * 2);
  };
  if (auto st = run_both(a, eager, replay); !st) return fail(st.error());
  const bool same_a = eager == replay;
  // New step: different seq lens, block table and queries written into the same buffers.
  probe_phase(PhaseWhere::kHost, "generate the second step's inputs");
  SpecVerifyInputs b = inputs_from_spec(spec, 1000);
  b.k_cache = a.k_cache;  // the cache stays; what changes is what the step addresses
  b.v_cache = a.v_cache;
  b.num_blocks = a.num_blocks;
  b.seq_lens.assign(a.seq_lens.rbegin(), a.seq_lens.rend());  // same block total, new per-request lengths
  if (b.batch == 1) b.seq_lens[0] = std::max(b.num_q, b.seq_lens[0] - 1);
  {
    Rng rng(spec.value("seed", 1) + 77);
    std::vector<int> blocks;
    for (int L : b.seq_lens) blocks.push_back((L + b.block_size - 1) / b.block_size);
    b.block_table = make_block_table(rng, blocks, b.bt_stride, a.num_blocks);
  }
  probe_phase(PhaseWhere::kDevice, "replay with the second step's inputs");
  for (auto st : {s.upload(dev->d_seq_lens, b.seq_lens.data(), b.seq_lens.size() * 4),
                  s.upload(dev->d_block_table, b.block_table.data(), b.block_table.size() * 4),
                  s.upload(dev->d_q, b.q.data(), b.q.size() * 2), poison_bf16(s, dev->d_out, b.out_elems())})
    if (!st) return fail(st.error());
  std::vector<uint16_t> eager_b(b.out_elems()), replay_b(b.out_elems());
  if (auto st = run_both(b, eager_b, replay_b); !st) return fail(st.error());
  const bool same_b = eager_b == replay_b;
  probe_phase(PhaseWhere::kHost, "check against the CPU reference");
  const ErrorStats err = check_spec_verify(b, replay_b, {});
  (void)SP_CU(d, cuGraphExecDestroy(exec));
  (void)SP_CU(d, cuGraphDestroy(graph));
  Json res = make_result(spec, kPass);
  res["metrics"] = err.json();
  res["metrics"]["bit_identical_first"] = same_a;
  res["metrics"]["bit_identical_after_update"] = same_b;
  res["metrics"]["replayed_output_changed"] = replay != replay_b;
  if (!same_a || !same_b || !spec_verify_passes(err)) {
    res["status"] = kFail;
    res["reason"] = fmt::format(
        "graph replay vs eager bit-identical: first {}, after new seq lens/block table {}; "
        "replayed result vs reference: norm rel err {:.3g}, {} unwritten",
        same_a, same_b, err.norm_rel(), err.unwritten);
  }
  const auto& l = dev->launch;
  if (auto f = s.function(l.kernel))
    res["evidence"] = s.kernel_evidence(*f, l.kernel, LaunchShape{l.grid_x, l.grid_y, l.grid_z, l.threads, l.smem});
  res["evidence"]["gpu"] = s.gpu().name;
  return res;
}

namespace {

// The plan's k / GQA / head_dim / KV dtype / block size, for models that verify through GQA
// attention over per-head K and V. MLA models verify through the MLA kernels (mla_verify): these
// have no kernel for their head_dim (576, 512) and would only skip.
Json spec_verify_plan_spec(const Json& facts, const char* probe) {
  const auto heads = int_fact(facts, "model.num_attention_heads");
  const auto kv_heads = int_fact(facts, "model.num_kv_heads");
  const auto head_dim = int_fact(facts, "model.head_dim");
  auto gqa = int_fact(facts, "model.gqa_ratio");
  if (!gqa && heads && kv_heads && *kv_heads > 0) gqa = *heads / *kv_heads;
  if (!gqa || !head_dim || mla_verify_applies(facts)) return nullptr;
  const int next_n = static_cast<int>(int_fact(facts, "spec.next_n").value_or(1));
  return {{"probe", probe},
          {"k", std::max(0, next_n - 1)},
          {"gqa", *gqa},
          {"heads_kv", 1},
          {"head_dim", *head_dim},
          {"kv_dtype", plan_kv_dtype(facts)},
          {"block_size", static_cast<int>(int_fact(facts, "serve.block_size").value_or(16))},
          {"batch", 2},
          {"context", 200},
          {"seed", 1}};
}

std::vector<Json> spec_verify_plan_specs(const Json& facts, const std::string&) {
  Json s = spec_verify_plan_spec(facts, "spec_verify");
  return s.is_null() ? std::vector<Json>{} : std::vector<Json>{s};
}

std::vector<Json> graph_replay_plan_specs(const Json& facts, const std::string&) {
  Json s = spec_verify_plan_spec(facts, "graph_replay");
  return s.is_null() ? std::vector<Json>{} : std::vector<Json>{s};
}

Expected<std::vector<Json>> option_specs(const char* probe, const ProbeShapeOptions& o, const CommonSpec& common) {
  std::vector<Json> specs;
  for (const auto& dt : o.kv_dtype)
    for (int g : o.gqa)
      for (int k : o.k)
        for (int d : o.sv_head_dim)
          for (int bs : o.block_size) {
            Json s =
                common({{"probe", probe}, {"k", k}, {"gqa", g}, {"head_dim", d}, {"kv_dtype", dt}, {"block_size", bs}});
            if (o.heads_kv > 0) s["heads_kv"] = o.heads_kv;
            if (o.splits >= 0) s["splits"] = o.splits;
            if (k >= 0)
              if (auto st = check_probe_size(spec_verify_probe_size(s), k + 1, "k + 1"); !st) return st.error();
            specs.push_back(s);
          }
  return specs;
}

Expected<std::vector<Json>> spec_verify_option_specs(const ProbeShapeOptions& o, const CommonSpec& common) {
  return option_specs("spec_verify", o, common);
}

Expected<std::vector<Json>> graph_replay_option_specs(const ProbeShapeOptions& o, const CommonSpec& common) {
  return option_specs("graph_replay", o, common);
}

// probe.<probe>.status / .reason: measured at the plan's own shape only (k + 1 rows, its KV dtype).
void record(const char* probe, const char* what, const std::vector<Json>& results, Json& facts) {
  for (const auto& r : results) {
    const std::string key = std::string("probe.") + probe;
    set_fact(facts, key + ".status", r.value("status", "error"));
    if (!r.value("reason", "").empty()) set_fact(facts, key + ".reason", r["reason"]);
    append_answer(facts, r, what, key, Json::object(), true);
  }
}

void spec_verify_record(const std::vector<Json>& results, Json& facts) {
  record("spec_verify", "spec-verify attention", results, facts);
}

void graph_replay_record(const std::vector<Json>& results, Json& facts) {
  record("graph_replay", "CUDA-graph replay", results, facts);
}

}  // namespace

const ProbeKind kSpecVerifyProbe = {"spec_verify",
                                    "spec-verify attention over a paged KV cache for one k / GQA / head_dim / KV dtype",
                                    run_spec_verify_probe,
                                    spec_verify_plan_specs,
                                    spec_verify_option_specs,
                                    spec_verify_record};

const ProbeKind kGraphReplayProbe = {"graph_replay",
                                     "CUDA-graph capture + replay of spec-verify with new seq lens and block tables",
                                     run_graph_replay_probe,
                                     graph_replay_plan_specs,
                                     graph_replay_option_specs,
                                     graph_replay_record};

}  // namespace specprobe::probes
