// The MLA verify probe without a GPU: its fp64 reference against a hand-computed case and a
// brute-force evaluation written here, the check's sensitivity (a wrong block table fails), the
// sparse lists, the memory estimate, spec validation (bad shapes name the key), the launch
// configuration, the plan wiring from real config.json files, and `specprobe probe`'s options.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <set>

#include "cli/probe.hpp"
#include "gpu/cuda_session.hpp"
#include "inputs/checkpoint/model_config.hpp"
#include "probes/mla_verify.hpp"
#include "probes/plan_probes.hpp"
#include "probes/probe_common.hpp"
#include "probes/runner.hpp"
#include "rules/sweep.hpp"

using namespace specprobe;
using namespace specprobe::probes;

namespace {

const std::string kMlaData = std::string(SPECPROBE_SOURCE_DIR) + "/tests/data/checkpoint/";
const std::string kExamples = std::string(SPECPROBE_SOURCE_DIR) + "/docs/examples/checkpoints/";

// Element e of token t of request b, read straight from the cache through the block table.
long double cache_at(const MlaVerifyInputs& in, int b, int t, int e) {
  const int blk = in.block_table[static_cast<size_t>(b) * in.bt_stride + t / in.block_size];
  const size_t idx = (static_cast<size_t>(blk) * in.block_size + t % in.block_size) * in.kv_dim + e;
  if (in.fp8) return static_cast<long double>(e4m3_to_float(in.kv_cache[idx])) * in.kv_scale;
  uint16_t v;
  std::memcpy(&v, in.kv_cache.data() + 2 * idx, 2);
  return bf16_to_float(v);
}

// Brute force, independent of mla_verify_reference: the request's whole logical cache, a mask
// over every position (dense: t <= pos; sparse: the row's list entries in 0..pos), then
// softmax(q K^T * sm_scale) V in long double. Returns [heads][v_dim].
std::vector<long double> brute_force(const MlaVerifyInputs& in, int b, int j) {
  const int L = in.seq_lens[static_cast<size_t>(b)], D = in.kv_dim, pos = L - in.num_q + j;
  std::vector<long double> K(static_cast<size_t>(L) * D);
  for (int t = 0; t < L; ++t)
    for (int e = 0; e < D; ++e) K[static_cast<size_t>(t) * D + e] = cache_at(in, b, t, e);
  std::vector<bool> mask(static_cast<size_t>(L), false);
  for (int t = 0; t < L; ++t) mask[static_cast<size_t>(t)] = in.topk == 0 && t <= pos;
  for (int i = 0; i < in.topk; ++i) {
    const int t = in.topk_indices[(static_cast<size_t>(b) * in.num_q + j) * in.topk + i];
    if (t >= 0 && t <= pos) mask[static_cast<size_t>(t)] = true;
  }
  std::vector<long double> out;
  for (int h = 0; h < in.heads; ++h) {
    const uint16_t* q = in.q.data() + ((static_cast<size_t>(b) * in.num_q + j) * in.heads + h) * D;
    std::vector<long double> s(static_cast<size_t>(L), -INFINITY);
    long double mx = -INFINITY;
    for (int t = 0; t < L; ++t) {
      if (!mask[static_cast<size_t>(t)]) continue;
      long double dot = 0;
      for (int e = 0; e < D; ++e)
        dot += static_cast<long double>(bf16_to_float(q[e])) * K[static_cast<size_t>(t) * D + e];
      s[static_cast<size_t>(t)] = dot * in.sm_scale;
      mx = std::max(mx, s[static_cast<size_t>(t)]);
    }
    long double den = 0;
    std::vector<long double> o(static_cast<size_t>(in.v_dim), 0);
    for (int t = 0; t < L; ++t) {
      if (!mask[static_cast<size_t>(t)]) continue;
      const long double p = std::exp(s[static_cast<size_t>(t)] - mx);
      den += p;
      for (int e = 0; e < in.v_dim; ++e) o[static_cast<size_t>(e)] += p * K[static_cast<size_t>(t) * D + e];
    }
    for (auto v : o) out.push_back(v / den);
  }
  return out;
}

// The reference's output for every row, as a kernel would write it (bf16).
std::vector<uint16_t> reference_output(const MlaVerifyInputs& in) {
  std::vector<uint16_t> out;
  for (int b = 0; b < in.batch; ++b)
    for (int j = 0; j < in.num_q; ++j)
      for (double v : mla_verify_reference(in, b, j)) out.push_back(float_to_bf16(static_cast<float>(v)));
  return out;
}

MlaVerifyShape shape(int k, int heads, int latent, int rope, int v_dim, int topk, int block_size, bool fp8) {
  return {k, heads, latent, rope, v_dim, topk, block_size, fp8};
}

void put_bf16(MlaVerifyInputs& in, size_t idx, float v) {
  const uint16_t b = float_to_bf16(v);
  std::memcpy(in.kv_cache.data() + 2 * idx, &b, 2);
}

}  // namespace

TEST_CASE("mla verify reference: a hand-computed case, rope dims scored, latent-only or whole-row output",
          "[probes][mla]") {
  // One request of 3 tokens, 2 verify rows (positions 1 and 2), 2 heads, rows of 8 latent + 8
  // rope values, blocks of 2: token t lives in block {2, 0}[t / 2]. Value t + 1 in latent dim 0,
  // score c_t = t in rope dim 8 (head 0's q is e_8; head 1's q is 0: uniform weights).
  MlaVerifyInputs in;
  in.batch = 1;
  in.num_q = 2;
  in.heads = 2;
  in.kv_dim = 16;
  in.v_dim = 8;
  in.block_size = 2;
  in.sm_scale = 1;
  in.bt_stride = 3;
  in.num_blocks = 3;
  in.seq_lens = {3};
  in.block_table = {2, 0, -1};
  in.q.assign(static_cast<size_t>(2 * 2 * 16), 0);
  for (int j = 0; j < 2; ++j) in.q[static_cast<size_t>(j) * 2 * 16 + 8] = float_to_bf16(1.f);
  in.kv_cache.assign(static_cast<size_t>(3 * 2 * 16 * 2), 0);
  const size_t slot[3] = {4, 5, 0};
  for (int t = 0; t < 3; ++t) {
    put_bf16(in, slot[t] * 16 + 0, static_cast<float>(t + 1));
    put_bf16(in, slot[t] * 16 + 8, static_cast<float>(t));
  }
  const double e = std::exp(1.0), e2 = std::exp(2.0);
  auto ref = mla_verify_reference(in, 0, 0);  // position 1: tokens 0, 1
  CHECK(ref[0] == Approx((1 + 2 * e) / (1 + e)).epsilon(1e-14));
  CHECK(ref[8 + 0] == Approx(1.5).epsilon(1e-14));  // head 1: uniform
  CHECK(ref[1] == 0.0);
  ref = mla_verify_reference(in, 0, 1);  // position 2: tokens 0..2
  CHECK(ref[0] == Approx((1 + 2 * e + 3 * e2) / (1 + e + e2)).epsilon(1e-14));
  CHECK(ref[8 + 0] == Approx(2.0).epsilon(1e-14));
  // DeepSeek-V4's form: the output is the whole row, its rope part (the scores here) included.
  in.v_dim = 16;
  ref = mla_verify_reference(in, 0, 1);
  CHECK(ref[8] == Approx((e + 2 * e2) / (1 + e + e2)).epsilon(1e-14));
  in.v_dim = 8;
  // Sparse: row 0 lists {2, 1} (2 is past its position: masked), row 1 lists {0, 2}.
  in.topk = 2;
  in.topk_indices = {2, 1, 0, 2};
  CHECK(mla_verify_reference(in, 0, 0)[0] == Approx(2.0).epsilon(1e-14));
  CHECK(mla_verify_reference(in, 0, 1)[0] == Approx((1 + 3 * e2) / (1 + e2)).epsilon(1e-14));
  in.topk_indices = {-1, 1, 0, -1};  // -1: no entry
  CHECK(mla_verify_reference(in, 0, 0)[0] == Approx(2.0).epsilon(1e-14));
  CHECK(mla_verify_reference(in, 0, 1)[0] == Approx(1.0).epsilon(1e-14));
}

TEST_CASE("mla verify reference matches a brute-force evaluation, dense and sparse, bf16 and fp8", "[probes][mla]") {
  for (const bool fp8 : {false, true})
    for (const int topk : {0, 9})
      for (const int v_extra : {0, 16}) {  // output: the latent (V3) or the whole row (V4)
        const MlaVerifyInputs in = make_mla_verify_inputs(shape(2, 3, 32, 16, 32 + v_extra, topk, 4, fp8), 3, 40, 11);
        INFO("fp8 " << fp8 << ", topk " << topk << ", v_dim " << in.v_dim);
        for (int b = 0; b < in.batch; ++b)
          for (int j = 0; j < in.num_q; ++j) {
            const auto ref = mla_verify_reference(in, b, j);
            const auto bf = brute_force(in, b, j);
            REQUIRE(ref.size() == bf.size());
            for (size_t i = 0; i < ref.size(); ++i)
              CHECK(std::fabs(ref[i] - static_cast<double>(bf[i])) <= 1e-12 * (1 + std::fabs(ref[i])));
          }
      }
}

TEST_CASE("mla verify check: the reference passes, poison and a wrong block table fail", "[probes][mla]") {
  for (const int topk : {0, 64}) {
    const MlaVerifyInputs in = make_mla_verify_inputs(shape(3, 16, 448, 64, 512, topk, 16, true), 2, 300, 5);
    std::vector<uint16_t> out = reference_output(in);
    const ErrorStats ok = check_mla_verify(in, out, {});
    INFO("norm rel " << ok.norm_rel() << ", max rel " << ok.max_rel());
    CHECK(mla_verify_passes(ok));
    CHECK(ok.norm_rel() < kMlaVerifyNormRel / 2);  // bf16 rounding alone stays well inside the limit
    out[7] = kPoisonBf16;
    CHECK(check_mla_verify(in, out, {}).unwritten == 1);
    CHECK_FALSE(mla_verify_passes(check_mla_verify(in, out, {})));
    // What a kernel reading through a corrupted block table (every entry one block on) writes.
    MlaVerifyInputs bad = in;
    for (int& blk : bad.block_table)
      if (blk >= 0) blk = (blk + 1) % bad.num_blocks;
    const ErrorStats e = check_mla_verify(in, reference_output(bad), {});
    INFO("corrupted: norm rel " << e.norm_rel());
    CHECK_FALSE(mla_verify_passes(e));
    CHECK(e.norm_rel() > 10 * kMlaVerifyNormRel);
  }
}

TEST_CASE("mla verify inputs: sparse lists hold the row, the masked later positions and padding", "[probes][mla]") {
  const MlaVerifyInputs in = make_mla_verify_inputs(shape(5, 16, 512, 64, 512, 48, 64, false), 12, 100, 3);
  CHECK(in.topk_indices.size() == static_cast<size_t>(12 * 6 * 48));
  bool padded = false, subset = false;
  for (int b = 0; b < in.batch; ++b)
    for (int j = 0; j < in.num_q; ++j) {
      const int L = in.seq_lens[static_cast<size_t>(b)], pos = L - in.num_q + j;
      std::set<int> seen;
      int pad = 0;
      for (int i = 0; i < in.topk; ++i) {
        const int t = in.topk_indices[(static_cast<size_t>(b) * in.num_q + j) * in.topk + i];
        if (t < 0) {
          CHECK(t == -1);
          ++pad;
          continue;
        }
        CHECK(t < L);
        CHECK(seen.insert(t).second);  // distinct
      }
      for (int t = pos; t < L; ++t) CHECK(seen.count(t) == 1);  // own position and every later verify one
      CHECK(static_cast<int>(seen.size()) == std::min(in.topk, L));
      padded |= pad > 0;
      subset |= static_cast<int>(seen.size()) < L;
    }
  CHECK(padded);  // some request is shorter than topk
  CHECK(subset);  // some selection leaves positions out
  CHECK(make_mla_verify_inputs(shape(1, 16, 512, 64, 512, 0, 64, false), 2, 50, 1).topk_indices.empty());
  // Reproducible from the seed.
  CHECK(make_mla_verify_inputs(shape(5, 16, 512, 64, 512, 48, 64, false), 12, 100, 3).topk_indices == in.topk_indices);
}

TEST_CASE("mla verify memory estimate is the size of the buffers the probe builds", "[probes][mla][limits]") {
  for (const auto& s : {shape(3, 16, 512, 64, 512, 0, 64, false), shape(1, 20, 448, 64, 512, 512, 1, true),
                        shape(7, 128, 512, 64, 512, 2048, 16, true)}) {
    const MlaVerifyBytes est = mla_verify_input_bytes(s, 3, 700, 9);
    const MlaVerifyInputs in = make_mla_verify_inputs(s, 3, 700, 9);
    CHECK(est.q == in.q.size() * 2);
    CHECK(est.cache == in.kv_cache.size());
    CHECK(est.block_table == in.block_table.size() * 4);
    CHECK(est.seq_lens == in.seq_lens.size() * 4);
    CHECK(est.topk_indices == in.topk_indices.size() * 4);
    CHECK(est.out == in.out_elems() * 2);
    CHECK(est.host() > est.device());
  }
  // Past any host: a skip with both figures, before anything is generated.
  Json big = {{"probe", "mla_verify"},
              {"k", 3},
              {"heads", 128},
              {"batch", kMaxProbeBatch},
              {"context", static_cast<int>(kMaxProbeTokens / kMaxProbeBatch)}};
  const Json r = run_mla_verify_probe(big);
  CHECK(r["status"] == kSkip);
  CHECK(r["reason"].get<std::string>().find("GiB of host memory") != std::string::npos);
}

TEST_CASE("mla verify spec validation: a bad shape is an error naming the key, one past the kernel a skip",
          "[probes][mla][limits]") {
  const Json ok = {{"k", 3},         {"heads", 16},       {"latent_dim", 512},
                   {"rope_dim", 64}, {"kv_dtype", "fp8"}, {"block_size", 64}};
  CHECK(mla_verify_spec_problem(ok).status.empty());
  Json v4 = ok;
  v4["latent_dim"] = 448;
  v4["v_dim"] = 512;
  v4["topk"] = 512;
  CHECK(mla_verify_spec_problem(v4).status.empty());
  const std::vector<std::tuple<const char*, Json, std::string, std::string>> cases = {
      {"k", -1, kError, "spec key 'k' is -1"},
      {"heads", 0, kError, "spec key 'heads' is 0"},
      {"latent_dim", 0, kError, "spec key 'latent_dim' is 0"},
      {"rope_dim", -64, kError, "spec key 'rope_dim' is -64"},
      {"v_dim", 300, kError, "spec key 'v_dim' is 300"},
      {"topk", -1, kError, "spec key 'topk' is -1"},
      {"kv_dtype", "fp16", kError, "spec key 'kv_dtype' is fp16"},
      {"block_size", 0, kError, "spec key 'block_size' is 0"},
      {"k", 16, kSkip, "k 16 outside 0..15"},
      {"heads", 129, kSkip, "heads 129"},
      {"latent_dim", 1024, kSkip, "kv_dim 1088"},
      {"latent_dim", 500, kSkip, "kv_dim 564"},
      {"block_size", 8192, kSkip, "block_size 8192"},
  };
  for (const auto& [key, value, status, text] : cases) {
    Json spec = ok;
    spec[key] = value;
    INFO(spec.dump());
    const SpecProblem p = mla_verify_spec_problem(spec);
    CHECK(p.status == status);
    CHECK(p.reason.find(text) != std::string::npos);
    // The probe returns the same before it touches the GPU.
    spec["probe"] = "mla_verify";
    const Json r = run_probe_in_process(spec);
    CHECK(r["status"] == status);
    CHECK(r["reason"].get<std::string>().find(text) != std::string::npos);
  }
  // Types are the runner's: a non-integer is an error naming the key.
  const Json hostile = run_probe_in_process({{"probe", "mla_verify"}, {"latent_dim", 1.5}});
  CHECK(hostile["status"] == kError);
  CHECK(hostile["reason"].get<std::string>().find("spec key 'latent_dim' is 1.5") != std::string::npos);
  // A request set the probe cannot build: an error naming the field.
  const Json short_ctx = run_mla_verify_probe({{"probe", "mla_verify"}, {"k", 7}, {"context", 4}});
  CHECK(short_ctx["status"] == kError);
  CHECK(short_ctx["reason"].get<std::string>().find("context 4 < k + 1 = 8") != std::string::npos);
}

TEST_CASE("mla verify launch configuration: a CTA per row and 16 heads, shared memory within every target",
          "[probes][mla]") {
  const MlaVerifyInputs in = make_mla_verify_inputs(shape(3, 20, 512, 64, 512, 0, 64, true), 3, 100, 1);
  const MlaVerifyLaunch l = mla_verify_launch_config(in);
  CHECK(l.kernel == "mla_verify_fp8");
  CHECK(l.grid_x == 3u * 4u);
  CHECK(l.grid_y == 2u);  // 20 heads: 16 + 4
  CHECK(l.threads == 256u);
  CHECK(l.smem == static_cast<unsigned>(specprobe_kernels::mla_verify_smem_bytes(576)));
  CHECK(specprobe_kernels::mla_verify_smem_bytes(specprobe_kernels::kMlaVerifyMaxDim) <= 99 * 1024);  // sm_86 / sm_120
  CHECK(specprobe_kernels::mla_verify_smem_bytes(576) <= 48 * 1024);
  CHECK(mla_verify_probe_size({{"topk", 2048}}).context == 2048 + 256);
  CHECK(mla_verify_probe_size(Json::object()).context == 300);
}

namespace {

Json plan_facts(const std::string& model, int tp, int next_n, const std::string& kv, int block_size = 0,
                const std::string& dir = kMlaData) {
  auto cfg = read_model_config(dir + model);
  REQUIRE(cfg.has_value());
  Json f = model_facts(*cfg, tp);
  f["engine"] = {{"name", "vllm"}};
  f["serve"] = {{"tp", tp}, {"kv_cache_dtype", kv}};
  if (block_size > 0) f["serve"]["block_size"] = block_size;
  f["spec"] = {{"next_n", next_n}};
  return f;
}

std::vector<Json> of_kind(const std::vector<Json>& specs, const std::string& kind) {
  std::vector<Json> out;
  for (const auto& s : specs)
    if (s["probe"] == kind) out.push_back(s);
  return out;
}

// The MLA specs of a plan: one per k of the sweep (1..8 and the plan's k, ascending), every one
// with the same shape but k; returns the spec at the plan's k.
Json check_mla_specs(const std::vector<Json>& all, int plan_k, int heads, int latent, int rope, int v_dim, int topk,
                     const char* kv, int block) {
  const std::vector<Json> specs = of_kind(all, "mla_verify");
  std::vector<int> ks;
  Json at_plan;
  for (const auto& s : specs) {
    INFO(s.dump());
    ks.push_back(s["k"].get<int>());
    if (s["k"] == plan_k) at_plan = s;
    CHECK(s["heads"] == heads);
    CHECK(s["latent_dim"] == latent);
    CHECK(s["rope_dim"] == rope);
    CHECK(s["v_dim"] == v_dim);
    CHECK(s["topk"] == topk);
    CHECK(s["kv_dtype"] == kv);
    CHECK(s["block_size"] == block);
    CHECK(s["batch"] == 2);
    CHECK(s["context"] == (topk > 0 ? topk + 256 : 200));
    CHECK(mla_verify_spec_problem(s).status.empty());
    const auto [batch, context] = mla_verify_probe_size(s);
    CHECK(probe_size_problem(batch, context, s["k"].get<int>() + 1, "k + 1").empty());
  }
  std::vector<int> want;
  for (int k = 1; k <= std::max(kMlaVerifySweepMaxK, plan_k); ++k)
    if (k <= kMlaVerifySweepMaxK || k == plan_k) want.push_back(k);
  CHECK(ks == want);
  return at_plan;
}

}  // namespace

TEST_CASE("plan probes: MLA models get mla_verify at their shape for every k of the sweep, sparse for DSA",
          "[probes][mla][plan]") {
  // DeepSeek-V3: 128 heads over TP 8, kv_lora_rank 512 + rope 64, output the latent; dense.
  auto specs = plan_probe_specs(plan_facts("deepseek-v3", 8, 4, "auto"), "auto");
  check_mla_specs(specs, 3, 16, 512, 64, 512, 0, "bf16", 64);
  CHECK(of_kind(specs, "spec_verify").empty());  // GQA attention is not how an MLA model verifies
  CHECK(of_kind(specs, "graph_replay").empty());
  // DeepSeek-V3.2: the same dims, sparse over index_topk 2048; the indexer probe as before.
  specs = plan_probe_specs(plan_facts("deepseek-v3.2", 8, 2, "fp8", 64), "auto");
  check_mla_specs(specs, 1, 16, 512, 64, 512, 2048, "fp8", 64);
  CHECK(of_kind(specs, "mqa_logits").size() == 1);
  // DeepSeek-V4-Flash (the bundled example checkpoint): head_dim 512 is the whole row (448 +
  // rope 64), output the whole row (K and V one vector); 64 heads over TP 4; sparse over
  // index_topk 512; next_n 3 verifies k + 1 = 3 rows.
  specs = plan_probe_specs(plan_facts("deepseek-v4-flash", 4, 3, "fp8", 256, kExamples), "auto");
  CHECK(check_mla_specs(specs, 2, 16, 448, 64, 512, 512, "fp8", 256)["k"] == 2);
  CHECK(of_kind(specs, "spec_verify").empty());
  // Kimi K2.5: 64 heads, kv_lora_rank 512 + 64, dense; TP 1 keeps all 64 heads on the rank; no
  // speculation (next_n 1): the sweep's k 1..8 still run, for the support matrix.
  specs = plan_probe_specs(plan_facts("kimi-k2.5", 1, 1, "fp8_e4m3"), "auto");
  check_mla_specs(specs, 0, 64, 512, 64, 512, 0, "fp8", 64);
  specs = plan_probe_specs(plan_facts("kimi-k2.5", 4, 3, "auto", 16), "auto");
  check_mla_specs(specs, 2, 16, 512, 64, 512, 0, "bf16", 16);
  // A plan k past the sweep gets its own spec too; past the kernel's 15 it is a skip at run time.
  specs = plan_probe_specs(plan_facts("deepseek-v3", 8, 13, "auto"), "auto");
  check_mla_specs(specs, 12, 16, 512, 64, 512, 0, "bf16", 64);
  // The KV dtype follows the derived kv.fp8 when present (auto resolved to fp8 by a checkpoint).
  Json forced = plan_facts("deepseek-v3", 8, 4, "auto");
  forced["kv"] = {{"fp8", true}};
  check_mla_specs(plan_probe_specs(forced, "auto"), 3, 16, 512, 64, 512, 0, "fp8", 64);
  // SGLang's DP attention: each DP group of TP 8 / DP 8 holds all 128 heads.
  Json sg = plan_facts("deepseek-v3", 8, 4, "auto");
  sg["engine"]["name"] = "sglang";
  sg["serve"]["dp"] = 8;
  sg["serve"]["dp_attention"] = true;
  sg["sglang"] = {{"page_size", 1}};
  check_mla_specs(plan_probe_specs(sg, "auto"), 3, 128, 512, 64, 512, 0, "bf16", 1);
  sg["serve"]["dp_attention"] = false;  // plain TP 8: 16 heads per rank
  check_mla_specs(plan_probe_specs(sg, "auto"), 3, 16, 512, 64, 512, 0, "bf16", 1);
  // Models without MLA: none, and spec_verify / graph_replay as before.
  for (const char* model : {"llama-3.1-8b", "gpt-oss-20b", "nvidia-qwen3.6-35b-a3b-nvfp4"}) {
    INFO(model);
    specs = plan_probe_specs(plan_facts(model, 1, 4, "auto"), "auto");
    CHECK(of_kind(specs, "mla_verify").empty());
    CHECK(of_kind(specs, "spec_verify").size() == 1);
  }
  // An MLA model whose rope dim is unknown: no spec rather than a guessed shape.
  Json no_rope = plan_facts("deepseek-v3", 8, 4, "auto");
  no_rope["model"]["mla_dims"].erase("qk_rope_head_dim");
  CHECK(of_kind(plan_probe_specs(no_rope, "auto"), "mla_verify").empty());
  CHECK(plan_probe_specs(plan_facts("deepseek-v3", 8, 4, "auto"), "off").empty());
}

TEST_CASE("plan probes: the MLA probe covers exactly the what-if sweep's k", "[probes][mla][plan]") {
  CHECK(kMlaVerifySweepMaxK == SweepOptions{}.max_k);
}

TEST_CASE("plan probes: mla_verify results become per-k probe.mla_verify facts", "[probes][mla][plan]") {
  auto mla = [](int k, const char* kv, int topk) {
    return Json{{"probe", "mla_verify"}, {"k", k}, {"kv_dtype", kv}, {"topk", topk}};
  };
  Json patch = probe_facts_patch({make_result(mla(1, "fp8", 2048), kPass),
                                  make_result(mla(2, "fp8", 2048), kFail, "norm rel err 0.4"),
                                  make_result(mla(3, "fp8", 2048), kCrash, "CUDA_ERROR_ILLEGAL_ADDRESS"),
                                  make_result({{"probe", "mqa_logits"}, {"next_n", 2}}, kPass)});
  CHECK(*find_fact(patch, "probe.mla_verify.k.1.status") == "pass");
  CHECK(find_fact(patch, "probe.mla_verify.k.1.reason") == nullptr);
  CHECK(*find_fact(patch, "probe.mla_verify.k.2.status") == "fail");
  CHECK(*find_fact(patch, "probe.mla_verify.k.2.reason") == "norm rel err 0.4");
  CHECK(*find_fact(patch, "probe.mla_verify.k.3.status") == "crash");
  CHECK(find_fact(patch, "probe.mla_verify.k.4.status") == nullptr);
  CHECK(*find_fact(patch, "probe.mla_verify.variant") == "sparse");
  CHECK(*find_fact(patch, "probe.mla_verify.kv_dtype") == "fp8");
  CHECK(*find_fact(patch, "probe.mqa_logits.next_n.2.status") == "pass");
  patch = probe_facts_patch({make_result(mla(4, "bf16", 0), kSkip, kNoKernelsReason)});
  CHECK(*find_fact(patch, "probe.mla_verify.k.4.status") == "skip");
  CHECK(*find_fact(patch, "probe.mla_verify.k.4.reason") == kNoKernelsReason);
  CHECK(*find_fact(patch, "probe.mla_verify.variant") == "dense");
  CHECK(*find_fact(patch, "probe.mla_verify.kv_dtype") == "bf16");
}

TEST_CASE("specprobe probe: MLA verify options make specs - a shape no model has is a usage error",
          "[probes][mla][cli]") {
  ProbeOptions o;
  o.kinds = {"mla_verify"};
  o.kv_dtype = {"bf16", "fp8"};
  auto specs = probe_specs_from_options(o);
  REQUIRE(specs.has_value());
  CHECK(specs->size() == 4);  // heads 16, 128 x bf16, fp8
  CHECK((*specs)[0]["latent_dim"] == 512);
  CHECK((*specs)[0]["v_dim"] == 512);
  o.mla_heads = {16};
  o.mla_latent_dim = {448};
  o.mla_v_dim = 512;
  o.mla_topk = {0, 512};
  o.k = {1, 7};
  specs = probe_specs_from_options(o);
  REQUIRE(specs.has_value());
  CHECK(specs->size() == 8);
  for (const auto& s : *specs) CHECK(mla_verify_spec_problem(s).status.empty());
  o.mla_v_dim = 300;
  auto bad = probe_specs_from_options(o);
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.error().message.find("spec key 'v_dim' is 300") != std::string::npos);
  o.mla_v_dim = 0;
  o.context = 5;
  auto short_ctx = probe_specs_from_options(o);
  REQUIRE_FALSE(short_ctx.has_value());
  CHECK(short_ctx.error().message.find("--batch / --context: context 5 < k + 1 = 8") != std::string::npos);
  ProbeOptions all;
  all.kinds = {"all"};
  const auto all_specs = probe_specs_from_options(all);  // held: a range-for over *temporary dangles
  REQUIRE(all_specs.has_value());
  bool has_mla = false;
  for (const auto& s : *all_specs) has_mla |= s["probe"] == "mla_verify";
  CHECK(has_mla);
}

TEST_CASE("mla verify in a build without probe kernels: a skip saying so, after the spec checks", "[probes][mla]") {
  const Json spec = {{"probe", "mla_verify"}, {"k", 2},      {"heads", 16},       {"latent_dim", 448}, {"rope_dim", 64},
                     {"v_dim", 512},          {"topk", 512}, {"kv_dtype", "fp8"}, {"block_size", 256}};
  const Json r = run_probe_in_process(spec);
  INFO(r.dump());
  if (probe_kernels_fatbin().empty()) {
    CHECK(r["status"] == kSkip);
    CHECK(r["reason"] == kNoKernelsReason);
  } else {  // a kernel build: it runs (pass on a GPU, an error naming the driver without one)
    CHECK(r.value("reason", std::string()) != kNoKernelsReason);
  }
  // A shape no model has is an error in either build: the spec is checked first.
  Json bad = spec;
  bad["v_dim"] = 300;
  CHECK(run_probe_in_process(bad)["status"] == kError);
}
