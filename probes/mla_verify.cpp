// Host side of the MLA verify-attention probe (mla_verify.hpp).
#include "probes/mla_verify.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <set>
#include <unordered_set>
#include <utility>

#include "common/parallel.hpp"
#include "facts/answers.hpp"
#include "gpu/cuda_session.hpp"
#include "probes/probe_gpu.hpp"

namespace specprobe::probes {

MlaVerifyShape mla_verify_shape(const Json& spec) {
  MlaVerifyShape s;
  s.k = spec.value("k", s.k);
  s.heads = spec.value("heads", s.heads);
  s.latent_dim = spec.value("latent_dim", s.latent_dim);
  s.rope_dim = spec.value("rope_dim", s.rope_dim);
  s.v_dim = spec.value("v_dim", s.latent_dim);
  s.topk = spec.value("topk", s.topk);
  s.block_size = spec.value("block_size", s.block_size);
  s.fp8 = spec.value("kv_dtype", std::string("bf16")) == "fp8";
  return s;
}

SpecProblem mla_verify_spec_problem(const Json& spec) {
  const MlaVerifyShape s = mla_verify_shape(spec);
  auto error = [](const char* key, int v, const std::string& why) -> SpecProblem {
    return {kError, fmt::format("spec key '{}' is {}: {}", key, v, why)};
  };
  auto skip = [](const std::string& why) -> SpecProblem {
    return {kSkip, "shape not supported by the probe kernel: " + why};
  };
  const std::string dt = spec.value("kv_dtype", std::string("bf16"));
  if (s.k < 0) return error("k", s.k, "num_speculative_tokens is at least 0");
  if (s.heads < 1) return error("heads", s.heads, "a rank has at least one query head");
  if (s.latent_dim < 1) return error("latent_dim", s.latent_dim, "the latent (kv_lora_rank) has at least one value");
  if (s.rope_dim < 0) return error("rope_dim", s.rope_dim, "the rope part has at least 0 values");
  const int64_t kv_dim = int64_t{s.latent_dim} + s.rope_dim;
  if (s.v_dim != s.latent_dim && s.v_dim != kv_dim)
    return error("v_dim", s.v_dim,
                 fmt::format("the output is the latent (latent_dim {}: DeepSeek V3, Kimi K2) or the whole row "
                             "(latent_dim + rope_dim {}: DeepSeek-V4)",
                             s.latent_dim, kv_dim));
  if (s.topk < 0) return error("topk", s.topk, "0 (dense) or the sparse variant's index_topk");
  if (dt != "bf16" && dt != "fp8") return {kError, fmt::format("spec key 'kv_dtype' is {}: not bf16 or fp8", dt)};
  if (s.block_size < 1) return error("block_size", s.block_size, "a block holds at least one token");
  if (s.k > 15) return skip(fmt::format("k {} outside 0..15", s.k));
  if (s.heads > 128) return skip(fmt::format("heads {} > 128 query heads per rank", s.heads));
  if (kv_dim % 16 != 0 || kv_dim > specprobe_kernels::kMlaVerifyMaxDim)
    return skip(fmt::format("kv_dim {} (latent_dim {} + rope_dim {}) is not a multiple of 16 up to {}", kv_dim,
                            s.latent_dim, s.rope_dim, specprobe_kernels::kMlaVerifyMaxDim));
  if (s.topk > kMaxProbeContext)
    return skip(fmt::format("topk {} > {} (the probes' context limit)", s.topk, kMaxProbeContext));
  if (s.block_size > 4096) return skip(fmt::format("block_size {} outside 1..4096", s.block_size));
  return {};
}

ProbeSize mla_verify_probe_size(const Json& spec) {
  const bool bench = spec.value("bench", false);
  const int topk = spec.value("topk", 0);
  const int context = bench ? 8192 : topk > 0 ? std::min<int64_t>(int64_t{topk} + 256, kMaxProbeContext) : 300;
  return {spec.value("batch", bench ? 64 : 2), spec.value("context", context)};
}

namespace {

// Row j's top-k list (see make_mla_verify_inputs): its own position, the later verify positions,
// random earlier ones (Floyd's sampling: distinct, O(topk)), shuffled, -1 padded.
void draw_topk_row(Rng& rng, int seq_len, int pos, int topk, int* row) {
  std::vector<int> list;
  list.reserve(static_cast<size_t>(topk));
  for (int t = pos; t < seq_len && static_cast<int>(list.size()) < topk; ++t) list.push_back(t);
  const int want = std::min(topk - static_cast<int>(list.size()), pos);
  std::unordered_set<int> chosen;
  for (int r = pos - want; r < pos; ++r) {
    const int t = rng.range(0, r);
    const int pick = chosen.insert(t).second ? t : r;
    if (pick == r) chosen.insert(r);
    list.push_back(pick);
  }
  list.resize(static_cast<size_t>(topk), -1);
  for (size_t i = list.size(); i > 1; --i) std::swap(list[i - 1], list[rng.next() % i]);
  std::copy(list.begin(), list.end(), row);
}

MlaVerifyBytes bytes_for(const MlaVerifyShape& s, int batch, const PagedRequests& paged, int context) {
  const uint64_t rows = static_cast<uint64_t>(batch) * static_cast<uint64_t>(s.k + 1) * static_cast<uint64_t>(s.heads);
  MlaVerifyBytes b;
  b.q = rows * static_cast<uint64_t>(s.kv_dim()) * 2;
  b.cache = static_cast<uint64_t>(paged.num_blocks) * static_cast<uint64_t>(s.block_size) *
            static_cast<uint64_t>(s.kv_dim()) * (s.fp8 ? 1 : 2);
  b.block_table = static_cast<uint64_t>(batch) * static_cast<uint64_t>(paged.bt_stride) * 4;
  b.seq_lens = static_cast<uint64_t>(batch) * 4;
  b.topk_indices = static_cast<uint64_t>(batch) * static_cast<uint64_t>(s.k + 1) * static_cast<uint64_t>(s.topk) * 4;
  b.out = rows * static_cast<uint64_t>(s.v_dim) * 2;
  // mla_verify_reference: the scores of every head over a row's visible tokens, q in fp64, one row.
  const uint64_t tokens = static_cast<uint64_t>(s.topk > 0 ? std::min(s.topk, context) : context);
  b.reference = (static_cast<uint64_t>(s.heads) * (tokens + static_cast<uint64_t>(s.kv_dim())) +
                 static_cast<uint64_t>(s.kv_dim())) *
                8;
  return b;
}

// The dequantised value of an fp8 cache code (e4m3 x kv_scale, exact in double).
double mla_cache_value_of_code(const MlaVerifyInputs& in, uint8_t code) {
  return static_cast<double>(e4m3_to_float(code)) * in.kv_scale;
}

// Dequantised value of cache element `e` (fp8: e4m3 x kv_scale, exact in double).
double mla_cache_value(const MlaVerifyInputs& in, size_t e) {
  if (in.fp8) return mla_cache_value_of_code(in, in.kv_cache[e]);
  uint16_t v;
  std::memcpy(&v, in.kv_cache.data() + 2 * e, 2);
  return bf16_to_float(v);
}

// The positions verify row j of request b attends to: dense, 0..pos; sparse, the entries of its
// list in 0..pos (the rest are padding or past its position).
std::vector<int> visible_positions(const MlaVerifyInputs& in, int b, int j) {
  const int pos = in.seq_lens[static_cast<size_t>(b)] - in.num_q + j;
  std::vector<int> v;
  if (in.topk == 0) {
    for (int t = 0; t <= pos; ++t) v.push_back(t);
    return v;
  }
  const int* row = in.topk_indices.data() + (static_cast<size_t>(b) * in.num_q + j) * in.topk;
  for (int i = 0; i < in.topk; ++i)
    if (row[i] >= 0 && row[i] <= pos) v.push_back(row[i]);
  return v;
}

}  // namespace

MlaVerifyInputs make_mla_verify_inputs(const MlaVerifyShape& s, int batch, int context, uint64_t seed) {
  Rng rng(seed);
  MlaVerifyInputs in;
  in.batch = batch;
  in.num_q = s.k + 1;
  in.heads = s.heads;
  in.kv_dim = s.kv_dim();
  in.v_dim = s.v_dim;
  in.block_size = s.block_size;
  in.topk = s.topk;
  in.fp8 = s.fp8;
  in.kv_scale = s.fp8 ? kMlaVerifyFp8Scale : 1.f;
  in.sm_scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(in.kv_dim)));
  PagedRequests paged = make_paged_requests(rng, batch, in.num_q, context, s.block_size);
  in.seq_lens = std::move(paged.seq_lens);
  in.block_table = std::move(paged.block_table);
  in.bt_stride = paged.bt_stride;
  in.num_blocks = paged.num_blocks;
  in.q.resize(static_cast<size_t>(batch) * in.num_q * in.heads * in.kv_dim);
  fill_from_rng(rng, in.q.size(), 2, [&](size_t i, Rng& r) { in.q[i] = float_to_bf16(r.nonzero(0.1, 1.0)); });
  const size_t elems = static_cast<size_t>(in.num_blocks) * in.block_size * in.kv_dim;
  in.kv_cache.resize(elems * (in.fp8 ? 1 : 2));
  if (in.fp8) {
    fill_from_rng(rng, elems, 1, [&](size_t e, Rng& r) { in.kv_cache[e] = random_e4m3(r); });
  } else {
    fill_from_rng(rng, elems, 2, [&](size_t e, Rng& r) {
      const uint16_t v = float_to_bf16(r.nonzero(0.1, 1.0));
      std::memcpy(in.kv_cache.data() + 2 * e, &v, 2);
    });
  }
  if (in.topk > 0) {
    in.topk_indices.resize(static_cast<size_t>(batch) * in.num_q * in.topk);
    for (int b = 0; b < batch; ++b)
      for (int j = 0; j < in.num_q; ++j) {
        const int L = in.seq_lens[static_cast<size_t>(b)];
        draw_topk_row(rng, L, L - in.num_q + j, in.topk,
                      in.topk_indices.data() + (static_cast<size_t>(b) * in.num_q + j) * in.topk);
      }
  }
  return in;
}

MlaVerifyBytes mla_verify_input_bytes(const MlaVerifyShape& s, int batch, int context, uint64_t seed) {
  Rng rng(seed);
  return bytes_for(s, batch, make_paged_requests(rng, batch, s.k + 1, context, s.block_size, false), context);
}

void mla_verify_reference_head(const MlaVerifyInputs& in, int b, int j, int h, double* out) {
  const int D = in.kv_dim, V = in.v_dim;
  // An fp8 cache's values by code, as mla_cache_value gives them: a look-up instead of decoding
  // every element again for every row (two fifths of a probe's reference time, issue 49).
  std::array<double, 256> by_code{};
  if (in.fp8)
    for (int c = 0; c < 256; ++c)
      by_code[static_cast<size_t>(c)] = mla_cache_value_of_code(in, static_cast<uint8_t>(c));
  auto value = [&](size_t e) { return in.fp8 ? by_code[in.kv_cache[e]] : mla_cache_value(in, e); };
  const std::vector<int> vis = visible_positions(in, b, j);
  const size_t n = vis.size();
  std::vector<double> q(static_cast<size_t>(D));
  const uint16_t* qb = in.q.data() + ((static_cast<size_t>(b) * in.num_q + j) * in.heads + h) * D;
  for (int e = 0; e < D; ++e) q[static_cast<size_t>(e)] = bf16_to_float(qb[e]);
  auto row_offset = [&](int t) {
    const int blk = in.block_table[static_cast<size_t>(b) * in.bt_stride + t / in.block_size];
    return (static_cast<size_t>(blk) * in.block_size + t % in.block_size) * D;
  };
  // Pass 1: scores s[i] = q . x_t * sm_scale, and their max.
  std::vector<double> s(n);
  double mx = -INFINITY;
  for (size_t i = 0; i < n; ++i) {
    const size_t base = row_offset(vis[i]);
    double dot = 0;
    for (int e = 0; e < D; ++e) dot += q[static_cast<size_t>(e)] * value(base + e);
    s[i] = dot * in.sm_scale;
    mx = std::max(mx, s[i]);
  }
  // Pass 2: out = sum_i p_i x_t[:V] / sum_i p_i.
  double den = 0;
  std::fill(out, out + V, 0.0);
  for (size_t i = 0; i < n; ++i) {
    const size_t base = row_offset(vis[i]);
    const double p = std::exp(s[i] - mx);
    den += p;
    for (int e = 0; e < V; ++e) out[e] += p * value(base + e);
  }
  if (den > 0)
    for (int e = 0; e < V; ++e) out[e] /= den;
}

std::vector<double> mla_verify_reference(const MlaVerifyInputs& in, int b, int j) {
  std::vector<double> out(static_cast<size_t>(in.heads) * in.v_dim);
  for (int h = 0; h < in.heads; ++h)
    mla_verify_reference_head(in, b, j, h, out.data() + static_cast<size_t>(h) * in.v_dim);
  return out;
}

ErrorStats check_mla_verify(const MlaVerifyInputs& in, const std::vector<uint16_t>& out,
                            const std::vector<int>& requests) {
  ErrorStats st;
  const size_t per_row = static_cast<size_t>(in.heads) * in.v_dim;
  std::vector<std::pair<int, int>> rows;
  for (int b : requests_or_all(requests, in.batch))
    for (int j = 0; j < in.num_q; ++j) rows.emplace_back(b, j);
  // The rows' references, head by head, are independent and were most of a probe's time (about
  // 60 ms a row at k = 8 on one core, issue 49): computed on the machine's cores (a row's heads
  // apart, so that a plan of few rows uses them too), compared in order.
  std::vector<std::vector<double>> refs(rows.size(), std::vector<double>(per_row));
  const size_t heads = static_cast<size_t>(in.heads);
  parallel_for(rows.size() * heads, [&](size_t job) {
    const size_t r = job / heads, h = job % heads;
    mla_verify_reference_head(in, rows[r].first, rows[r].second, static_cast<int>(h),
                              refs[r].data() + h * static_cast<size_t>(in.v_dim));
  });
  for (size_t r = 0; r < rows.size(); ++r)
    st.add_bf16(out.data() + (static_cast<size_t>(rows[r].first) * in.num_q + rows[r].second) * per_row, refs[r].data(),
                per_row);
  return st;
}

bool mla_verify_passes(const ErrorStats& e) {
  return e.unwritten == 0 && e.nonfinite == 0 && e.norm_rel() <= kMlaVerifyNormRel && e.max_rel() <= kMlaVerifyMaxRel;
}

MlaVerifyLaunch mla_verify_launch_config(const MlaVerifyInputs& in) {
  MlaVerifyLaunch l;
  l.kernel = in.fp8 ? "mla_verify_fp8" : "mla_verify_bf16";
  l.grid_x = static_cast<unsigned>(in.batch * in.num_q);
  l.grid_y = static_cast<unsigned>((in.heads + specprobe_kernels::kMlaVerifyHeadsPerCta - 1) /
                                   specprobe_kernels::kMlaVerifyHeadsPerCta);
  l.smem = static_cast<unsigned>(specprobe_kernels::mla_verify_smem_bytes(in.kv_dim));
  return l;
}

Expected<MlaVerifyDevice> upload_mla_verify(GpuSession& s, const MlaVerifyInputs& in) {
  MlaVerifyDevice dev;
  dev.launch = mla_verify_launch_config(in);
  auto q = upload_buffer(s, in.q.data(), in.q.size() * 2);
  auto kv = upload_buffer(s, in.kv_cache.data(), in.kv_cache.size());
  auto bt = upload_buffer(s, in.block_table.data(), in.block_table.size() * 4);
  auto sl = upload_buffer(s, in.seq_lens.data(), in.seq_lens.size() * 4);
  auto tk = upload_buffer(s, in.topk_indices.data(), in.topk_indices.size() * 4);
  auto out = upload_buffer(s, nullptr, (in.out_elems() + 1) / 2 * 4);  // whole words for the poison
  for (auto* a : {&q, &kv, &bt, &sl, &tk, &out})
    if (!*a) return a->error();
  if (auto st = poison_bf16(s, *out, in.out_elems()); !st) return st.error();
  dev.params = {.q = *q,
                .kv_cache = *kv,
                .block_table = *bt,
                .seq_lens = *sl,
                .topk_indices = *tk,
                .out = *out,
                .batch = in.batch,
                .num_q = in.num_q,
                .heads = in.heads,
                .kv_dim = in.kv_dim,
                .v_dim = in.v_dim,
                .block_size = in.block_size,
                .block_table_stride = in.bt_stride,
                .topk = in.topk,
                .sm_scale = in.sm_scale,
                .kv_scale = in.kv_scale};
  return dev;
}

Status launch_mla_verify(GpuSession& s, const MlaVerifyDevice& dev) {
  const MlaVerifyLaunch& l = dev.launch;
  auto params = dev.params;
  auto f = s.function(l.kernel);
  return f ? s.launch(*f, LaunchShape{l.grid_x, l.grid_y, 1, l.threads, l.smem}, &params) : Status(f.error());
}

Json run_mla_verify_probe(const Json& spec) {
  if (const SpecProblem sp = mla_verify_spec_problem(spec); !sp.status.empty())
    return make_result(spec, sp.status, sp.reason);
  const MlaVerifyShape shape = mla_verify_shape(spec);
  const bool bench = spec.value("bench", false);
  const auto [batch, context] = mla_verify_probe_size(spec);
  if (auto why = probe_size_problem(batch, context, shape.k + 1, "k + 1"); !why.empty())
    return make_result(spec, kError, "request set not usable: " + why);
  const uint64_t seed = spec.value("seed", 1);
  const MlaVerifyBytes bytes = mla_verify_input_bytes(shape, batch, context, seed);
  if (Json sk =
          host_memory_skip(spec, bytes.host(), "host memory for the inputs, the downloaded outputs and the reference");
      !sk.is_null())
    return sk;
  if (probe_kernels_fatbin().empty()) return make_result(spec, kSkip, kNoKernelsReason);
  probe_phase(PhaseWhere::kHost, "generate inputs");
  const MlaVerifyInputs in = make_mla_verify_inputs(shape, batch, context, seed);
  probe_phase(PhaseWhere::kDevice, "run kernel");
  auto sess = GpuSession::open(probe_kernels_fatbin());
  if (!sess) return session_failure(spec, sess.error());
  GpuSession& s = **sess;
  if (Json sk = device_memory_skip(s, spec, bytes.device()); !sk.is_null()) return sk;
  const MlaVerifyLaunch l = mla_verify_launch_config(in);
  if (Json sk = smem_skip(s, spec, l.smem); !sk.is_null()) return sk;
  auto dev = upload_mla_verify(s, in);
  if (!dev) return cuda_failure(s, spec, dev.error());
  std::vector<uint16_t> out(in.out_elems());
  if (auto st = launch_and_download(
          s, [&] { return launch_mla_verify(s, *dev); }, dev->params.out, out);
      !st)
    return cuda_failure(s, spec, st.error());
  probe_phase(PhaseWhere::kHost, "check against the CPU reference");
  const ErrorStats err = check_mla_verify(in, out, bench ? std::vector<int>{0, in.batch - 1} : std::vector<int>{});
  Json res = comparison_result(spec, err, mla_verify_passes(err), kMlaVerifyNormRel, kMlaVerifyMaxRel);
  res["metrics"]["max_abs_err"] = std::isfinite(err.max_abs_err) ? Json(err.max_abs_err) : Json(nullptr);
  res["metrics"]["kv_dim"] = in.kv_dim;
  res["metrics"]["v_dim"] = in.v_dim;
  if (auto f = s.function(l.kernel))
    res["evidence"] = s.kernel_evidence(*f, l.kernel, LaunchShape{l.grid_x, l.grid_y, 1, l.threads, l.smem});
  res["evidence"]["gpu"] = s.gpu().name;
  if (spec.value("time", bench)) {
    probe_phase(PhaseWhere::kDevice, "time kernel");
    auto ms = s.time_median_ms([&] { return launch_mla_verify(s, *dev); }, bench ? 5 : 3, bench ? 50 : 20);
    if (!ms) return cuda_failure(s, spec, ms.error());
    res["metrics"]["time_us_median"] = *ms * 1e3;
  }
  return res;
}

std::vector<Json> mla_verify_plan_specs(const Json& facts, const std::string&) {
  if (!fact_bool(facts, "model.mla").value_or(false)) return {};
  const auto heads = heads_per_rank(facts);
  const auto rope = int_fact(facts, "model.mla_dims.qk_rope_head_dim");
  const auto lora = int_fact(facts, "model.mla_dims.kv_lora_rank");
  const auto head_dim = int_fact(facts, "model.head_dim");
  if (!heads || !rope || (!lora && !head_dim)) return {};
  const int64_t latent = lora ? *lora : *head_dim - *rope;
  const int64_t v_dim = lora ? *lora : *head_dim;
  const int64_t topk =
      fact_bool(facts, "model.dsa.present").value_or(false) ? int_fact(facts, "model.dsa.index_topk").value_or(0) : 0;
  const int64_t block = int_fact(facts, "serve.block_size").value_or(int_fact(facts, "sglang.page_size").value_or(64));
  const int plan_k = std::max(0, static_cast<int>(int_fact(facts, "spec.next_n").value_or(1)) - 1);
  std::set<int> ks;
  for (int k = 1; k <= kMlaVerifySweepMaxK; ++k) ks.insert(k);
  if (plan_k > 0) ks.insert(plan_k);
  std::vector<Json> specs;
  for (int k : ks)
    specs.push_back({{"probe", "mla_verify"},
                     {"k", k},
                     {"heads", *heads},
                     {"latent_dim", latent},
                     {"rope_dim", *rope},
                     {"v_dim", v_dim},
                     {"topk", topk},
                     {"kv_dtype", plan_kv_dtype(facts)},
                     {"block_size", block},
                     {"batch", 2},
                     {"context", topk > 0 ? topk + 256 : 200},
                     {"seed", 1}});
  return specs;
}

bool mla_verify_applies(const Json& facts) { return !mla_verify_plan_specs(facts, "auto").empty(); }

namespace {

Expected<std::vector<Json>> mla_verify_option_specs(const ProbeShapeOptions& o, const CommonSpec& common) {
  std::vector<Json> specs;
  for (const auto& dt : o.kv_dtype)
    for (int h : o.mla_heads)
      for (int latent : o.mla_latent_dim)
        for (int rope : o.mla_rope_dim)
          for (int topk : o.mla_topk)
            for (int k : o.k)
              for (int bs : o.block_size) {
                Json s = common({{"probe", "mla_verify"},
                                 {"k", k},
                                 {"heads", h},
                                 {"latent_dim", latent},
                                 {"rope_dim", rope},
                                 {"v_dim", o.mla_v_dim > 0 ? o.mla_v_dim : latent},
                                 {"topk", topk},
                                 {"kv_dtype", dt},
                                 {"block_size", bs}});
                // A shape no model has is a usage error naming the key; one past the kernel's
                // limits stays a skip at run time, as for the other probes.
                if (const auto sp = mla_verify_spec_problem(s); sp.status == kError)
                  return usage_error("--mla-*, --k, --kv-dtype, --block-size: " + sp.reason);
                if (k >= 0)
                  if (auto st = check_probe_size(mla_verify_probe_size(s), k + 1, "k + 1"); !st) return st.error();
                specs.push_back(s);
              }
  return specs;
}

// probe.mla_verify.k.<k>.status / .reason, probe.mla_verify.variant (dense | sparse) and .kv_dtype
// (the dtype the probe ran: the plan's); each answers for cells at its k with its KV dtype.
void mla_verify_record(const std::vector<Json>& results, Json& facts) {
  for (const auto& r : results) {
    const Json spec = r.value("spec", Json::object());
    const int k = spec.value("k", 0);
    const std::string kv = spec.value("kv_dtype", std::string("bf16"));
    const std::string key = fmt::format("probe.mla_verify.k.{}", k);
    set_fact(facts, key + ".status", r.value("status", "error"));
    if (!r.value("reason", "").empty()) set_fact(facts, key + ".reason", r["reason"]);
    set_fact(facts, "probe.mla_verify.variant", spec.value("topk", 0) > 0 ? "sparse" : "dense");
    set_fact(facts, "probe.mla_verify.kv_dtype", kv);
    append_answer(facts, r, fmt::format("MLA verify attention at k={} ({} KV)", k, kv), key,
                  {{"spec.k", k}, {"kv.fp8", kv == "fp8"}});
  }
}

}  // namespace

const ProbeKind kMlaVerifyProbe = {
    "mla_verify",
    "MLA verify attention over a paged latent cache for one k / heads / latent + rope dims / KV dtype, dense or top-k "
    "sparse",
    run_mla_verify_probe,
    mla_verify_plan_specs,
    mla_verify_option_specs,
    mla_verify_record};

}  // namespace specprobe::probes
