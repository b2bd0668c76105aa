// Plan-driven probes for `specprobe check` (see plan_probes.hpp).
#include "probes/plan_probes.hpp"

#include <algorithm>
#include <set>

#include "probes/probe_common.hpp"
#include "probes/runner.hpp"

namespace specprobe::probes {

namespace {

std::optional<int64_t> int_fact(const Json& facts, const char* dotted) {
  const Json* v = find_fact(facts, dotted);
  if (!v || !v->is_number_integer()) return std::nullopt;
  return v->get<int64_t>();
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
      specs.push_back({{"probe", "mqa_logits"}, {"next_n", n}, {"heads", *idx_heads}, {"head_dim", d},
                       {"block_kv", 64}, {"batch", 2}, {"context", 200}, {"seed", 1}});
  }
  const auto heads = int_fact(facts, "model.num_attention_heads");
  const auto kv_heads = int_fact(facts, "model.num_kv_heads");
  const auto head_dim = int_fact(facts, "model.head_dim");
  auto gqa = int_fact(facts, "model.gqa_ratio");
  if (!gqa && heads && kv_heads && *kv_heads > 0) gqa = *heads / *kv_heads;
  if (gqa && head_dim) {
    const Json* dt = find_fact(facts, "serve.kv_cache_dtype");
    const std::string kv = dt && dt->is_string() && dt->get<std::string>().rfind("fp8", 0) == 0 ? "fp8" : "bf16";
    const int bs = static_cast<int>(int_fact(facts, "serve.block_size").value_or(16));
    Json s = {{"probe", "spec_verify"}, {"k", std::max(0, next_n - 1)}, {"gqa", *gqa}, {"heads_kv", 1},
              {"head_dim", *head_dim}, {"kv_dtype", kv}, {"block_size", bs}, {"batch", 2}, {"context", 200}, {"seed", 1}};
    specs.push_back(s);
    s["probe"] = "graph_replay";
    specs.push_back(s);
  }
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
      if (!r.value("reason", "").empty()) set_fact(facts, fmt::format("probe.mqa_logits.next_n.{}.reason", n), r["reason"]);
      by_n[n] = status;
    } else if (kind == "spec_verify" || kind == "graph_replay") {
      set_fact(facts, "probe." + kind + ".status", status);
      if (!r.value("reason", "").empty()) set_fact(facts, "probe." + kind + ".reason", r["reason"]);
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
  RunnerOptions ro;
  ro.child_command = opts.child_command.empty() ? self_child_command() : opts.child_command;
  ro.timeout_s = opts.timeout_s;
  const auto results = specs.empty() ? std::vector<Json>{} : run_probes_isolated(specs, ro);
  run.facts_patch = probe_facts_patch(results);
  for (const auto& r : results) run.results.push_back(r);
  return run;
}

}  // namespace specprobe::probes
