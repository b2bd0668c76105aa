// The DeepGEMM stack probe (adapter: stack_deep_gemm.py): the installed DeepGEMM's paged MQA
// logits at each next_n of the what-if sweep, for a DSA model's indexer. Its answers decide the
// indexer cells (dsa.decided_by = stack-probe, facts/derive.cpp).
#include <algorithm>
#include <set>

#include "facts/answers.hpp"
#include "probes/probe_common.hpp"
#include "probes/stack_kinds.hpp"

namespace specprobe::probes {

namespace {

Json deep_gemm_plan_spec(const Json& facts, const StackProbeOptions& opts, bool /*forced*/) {
  auto heads = int_fact(facts, "model.dsa.index_n_heads");
  if (!heads)
    return stack_skip_spec("deep_gemm",
                           "the model has no DSA indexer: DeepGEMM's paged MQA logits are not on its path");
  const int next_n = static_cast<int>(int_fact(facts, "spec.next_n").value_or(1));
  std::set<int> ns(opts.next_n.begin(), opts.next_n.end());
  if (ns.empty()) {
    for (int n = 1; n <= kStackSweepMaxNextN; ++n) ns.insert(n);
    ns.insert(std::clamp(next_n, 1, 16));
  }
  const int block_kv = 64;  // SM90 requires 64; SM100 takes 32 or 64; vLLM uses 64 on both
  return stack_run_spec("deep_gemm", {{"next_n", std::vector<int>(ns.begin(), ns.end())},
                                      {"heads", *heads},
                                      {"head_dim", int_fact(facts, "model.dsa.index_head_dim").value_or(128)},
                                      {"block_kv", block_kv},
                                      {"batch", 2},
                                      {"context", 200},
                                      {"arch_family", fact_string(facts, "gpu.arch_family").value_or("")}});
}

Json deep_gemm_option_params(const StackShape& s) {
  const auto& o = s.shape;
  return {{"next_n", s.next_n},
          {"heads", o.heads.empty() ? 64 : o.heads.front()},
          {"head_dim", o.head_dim.empty() ? 128 : o.head_dim.front()},
          {"block_kv", o.block_kv.empty() ? 64 : o.block_kv.front()},
          {"batch", s.batch},
          {"context", s.context}};
}

std::string deep_gemm_check_case(const Json& c) {
  const Json p = c.value("params", Json::object());
  if (!p.contains("next_n") || !p["next_n"].is_number_integer() || p["next_n"].get<int>() < 1 ||
      p["next_n"].get<int>() > 64)
    return "a DeepGEMM case has no next_n";
  if (c["key"] != fmt::format("next_n.{}", p["next_n"].get<int>()))
    return "a DeepGEMM case key does not match its next_n";
  return "";
}

std::string deep_gemm_check_result(const Json& r, const Json& spec) {
  // Every requested next_n must be answered (or the run is incomplete).
  const std::string st = r.value("status", "");
  if (st == kSkip || st == kError || !spec.contains("params")) return "";
  std::set<std::string> keys;
  for (const auto& c : r["cases"]) keys.insert(c["key"].get<std::string>());
  for (const auto& n : spec["params"].value("next_n", Json::array()))
    if (!keys.count(fmt::format("next_n.{}", n.get<int>()))) return fmt::format("no case for next_n={}", n.get<int>());
  return "";
}

// One answer per next_n, for the cells whose indexer decision it made (dsa.decided_by, derive_dsa).
void deep_gemm_record(const Json& r, Json& facts) {
  const std::string version = stack_version_text(r, "unknown");
  const Json dev = r.value("device", Json());
  const std::string device =
      dev.is_object() && dev.value("name", Json()).is_string() ? dev["name"].get<std::string>() : "this GPU";
  Json rec = {{"probe", "stack_deep_gemm"}, {"status", r.value("status", std::string(kError))}};
  if (!r.value("reason", "").empty()) rec["reason"] = r["reason"];
  for (const auto& c : r.value("cases", Json::array())) {
    const std::string key = c["key"].get<std::string>();
    if (key.rfind("next_n.", 0) != 0) continue;
    const int n = std::atoi(key.c_str() + 7);
    Json crec = rec;
    crec["status"] = c["status"];
    Json& a = append_answer(facts, crec, fmt::format("DeepGEMM {} at next_n={}", version, n), "stack.deep_gemm." + key,
                            {{"dsa.decided_by", "stack-probe"}, {"dsa.stack_probe.next_n", n}}, false, kStackAnswers);
    a["says"] = fmt::format("DeepGEMM {} {} next_n={} on {}{}", version, c["status"] == "pass" ? "accepted" : "refused",
                            n, device, stack_cached_words(r));
  }
}

}  // namespace

const StackKind kDeepGemmStack = {
    "deep_gemm",          "DeepGEMM's paged MQA logits (the DSA indexer's scoring kernel) at each next_n",
    deep_gemm_plan_spec,  deep_gemm_option_params,
    deep_gemm_check_case, deep_gemm_check_result,
    deep_gemm_record,     {"deep_gemm", nullptr},
};

}  // namespace specprobe::probes
