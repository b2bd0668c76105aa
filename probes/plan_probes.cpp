// Plan-driven probes for `specprobe check` (see plan_probes.hpp).
#include "probes/plan_probes.hpp"

#include <algorithm>
#include <set>

#include "gpu/cuda_session.hpp"
#include "probes/probe_common.hpp"
#include "probes/runner.hpp"

namespace specprobe::probes {

namespace {

// The probes' KV dtype: fp8 when the plan's KV cache is fp8 (kv.fp8: an fp8* --kv-cache-dtype, or
// auto resolved to fp8 by the checkpoint's kv_cache_scheme), else bf16; without derived facts,
// fp8 for any fp8* serve.kv_cache_dtype.
std::string plan_kv_dtype(const Json& facts) {
  if (auto fp8 = fact_bool(facts, "kv.fp8")) return *fp8 ? "fp8" : "bf16";
  const Json* dt = find_fact(facts, "serve.kv_cache_dtype");
  return dt && dt->is_string() && dt->get<std::string>().rfind("fp8", 0) == 0 ? "fp8" : "bf16";
}

// Query heads on one attention rank: the model's over the tensor-parallel size, or over the
// attention TP size tp / dp under SGLang's --enable-dp-attention (each DP group holds tp / dp).
std::optional<int64_t> heads_per_rank(const Json& facts) {
  const auto heads = int_fact(facts, "model.num_attention_heads");
  if (!heads || *heads < 1) return std::nullopt;
  int64_t tp = std::max<int64_t>(1, int_fact(facts, "serve.tp").value_or(1));
  const int64_t dp = std::max<int64_t>(1, int_fact(facts, "serve.dp").value_or(1));
  if (fact_string(facts, "engine.name").value_or("") == "sglang" &&
      fact_bool(facts, "serve.dp_attention").value_or(false) && tp % dp == 0)
    tp /= dp;
  return std::max<int64_t>(1, *heads / tp);
}

// The MLA verify probe at the plan's shape, one spec per k of the what-if sweep (1..
// kMlaVerifySweepMaxK, and the plan's own k), for models that verify through MLA (model.mla):
// latent and rope dims from model.mla_dims (kv_lora_rank + qk_rope_head_dim, output in the
// latent), or for a model without kv_lora_rank (DeepSeek-V4) from model.head_dim, the whole row,
// with qk_rope_head_dim of it rope (output: the whole row); the sparse variant with
// model.dsa.index_topk for DSA models, its context topk + 256 so that a selection is a strict
// subset. Block size: serve.block_size, else SGLang's page size, else 64 (FlashMLA's). Empty when
// the model is not MLA or a dimension is unknown.
std::vector<Json> mla_verify_plan_specs(const Json& facts, int plan_k) {
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

}  // namespace

std::vector<Json> plan_probe_specs(const Json& facts, const std::string& mode) {
  std::vector<Json> specs;
  if (mode == "off") return specs;
  const int next_n = static_cast<int>(int_fact(facts, "spec.next_n").value_or(1));
  if (auto idx_heads = int_fact(facts, "model.dsa.index_n_heads")) {
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
  }
  const auto heads = int_fact(facts, "model.num_attention_heads");
  const auto kv_heads = int_fact(facts, "model.num_kv_heads");
  const auto head_dim = int_fact(facts, "model.head_dim");
  auto gqa = int_fact(facts, "model.gqa_ratio");
  if (!gqa && heads && kv_heads && *kv_heads > 0) gqa = *heads / *kv_heads;
  // MLA models verify through the MLA kernels (below), not GQA attention over per-head K and V:
  // spec_verify and graph_replay have no kernel for their head_dim (576, 512) and would only skip.
  const auto mla = mla_verify_plan_specs(facts, std::max(0, next_n - 1));
  if (gqa && head_dim && mla.empty()) {
    const std::string kv = plan_kv_dtype(facts);
    const int bs = static_cast<int>(int_fact(facts, "serve.block_size").value_or(16));
    Json s = {{"probe", "spec_verify"},
              {"k", std::max(0, next_n - 1)},
              {"gqa", *gqa},
              {"heads_kv", 1},
              {"head_dim", *head_dim},
              {"kv_dtype", kv},
              {"block_size", bs},
              {"batch", 2},
              {"context", 200},
              {"seed", 1}};
    specs.push_back(s);
    s["probe"] = "graph_replay";
    specs.push_back(s);
  }
  specs.insert(specs.end(), mla.begin(), mla.end());
  return specs;
}

Json probe_facts_patch(const std::vector<Json>& results) {
  Json facts = Json::object();
  set_fact(facts, "probe.ran", !results.empty());
  std::map<int, std::string> by_n;
  for (const auto& r : results) {
    const std::string kind = r.value("probe", "");
    const std::string status = r.value("status", "error");
    const Json spec = r.value("spec", Json::object());
    if (kind == "mqa_logits") {
      const int n = spec.value("next_n", 0);
      set_fact(facts, fmt::format("probe.mqa_logits.next_n.{}.status", n), status);
      if (!r.value("reason", "").empty())
        set_fact(facts, fmt::format("probe.mqa_logits.next_n.{}.reason", n), r["reason"]);
      by_n[n] = status;
    } else if (kind == "spec_verify" || kind == "graph_replay") {
      set_fact(facts, "probe." + kind + ".status", status);
      if (!r.value("reason", "").empty()) set_fact(facts, "probe." + kind + ".reason", r["reason"]);
    } else if (kind == "mla_verify") {
      const int k = spec.value("k", 0);
      set_fact(facts, fmt::format("probe.mla_verify.k.{}.status", k), status);
      if (!r.value("reason", "").empty()) set_fact(facts, fmt::format("probe.mla_verify.k.{}.reason", k), r["reason"]);
      set_fact(facts, "probe.mla_verify.variant", spec.value("topk", 0) > 0 ? "sparse" : "dense");
      set_fact(facts, "probe.mla_verify.kv_dtype", spec.value("kv_dtype", std::string("bf16")));
    }
  }
  if (!by_n.empty()) {
    // Highest n such that every tested n' <= n passed (null when the smallest failed).
    Json best = nullptr;
    for (const auto& [n, st] : by_n) {
      if (st != kPass) break;
      best = n;
    }
    set_fact(facts, "probe.mqa_logits.max_native_next_n", best);
  }
  return facts;
}

ProbeRun run_plan_probes(const Json& facts, const PlanProbeOptions& opts) {
  ProbeRun run;
  if (opts.mode == "off" || (opts.mode == "auto" && !opts.gpu_present)) {
    set_fact(run.facts_patch, "probe.ran", false);
    set_fact(run.facts_patch, "probe.reason", opts.mode == "off" ? "--probes off" : "no GPU visible");
    return run;
  }
  const auto specs = plan_probe_specs(facts, opts.mode);
  if (!opts.gpu_present) {
    // --probes all on a machine with no GPU to run them on (a CPU CI runner evaluating for a
    // declared --gpu): nothing was measured, which is a skip like a build without kernels, not an
    // error that would leave the plan undecided (rules/plan_path.cpp). The records stay, one per
    // shape, so the report says which measurements this machine could not take.
    // A binary without kernels could not run them on any GPU: that reason comes first.
    const std::string why = probe_kernels_fatbin().empty()
                                ? std::string(kNoKernelsReason)
                                : "no GPU on this machine to run probes on (" +
                                      (opts.no_gpu_reason.empty() ? std::string("none visible") : opts.no_gpu_reason) +
                                      "); run specprobe on the GPU host for measured answers";
    for (const auto& sp : specs) run.results.push_back(make_result(sp, kSkip, why));
    run.facts_patch = probe_facts_patch(std::vector<Json>(run.results.begin(), run.results.end()));
    return run;
  }
  RunnerOptions ro;
  ro.child_command = opts.child_command.empty() ? self_child_command() : opts.child_command;
  ro.timeout_s = opts.timeout_s;
  const auto results = specs.empty() ? std::vector<Json>{} : run_probes_isolated(specs, ro);
  run.facts_patch = probe_facts_patch(results);
  for (const auto& r : results) run.results.push_back(r);
  return run;
}

}  // namespace specprobe::probes
