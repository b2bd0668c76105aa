// The probes `specprobe check` runs for a plan: shapes derived from facts at tiny sizes, run in
// isolated children, results folded back into facts under "probe." (names in probes/README.md).
// plan_probe_specs and probe_facts_patch are GPU-independent; run_plan_probes starts children.
#pragma once
#include <string>
#include <vector>

#include "common/json.hpp"

namespace specprobe::probes {

struct PlanProbeOptions {
  std::string mode = "auto";               // auto | off | all
  double timeout_s = 20;                   // per probe
  std::vector<std::string> child_command;  // empty = self_child_command()
  bool gpu_present = true;                 // auto runs nothing without a GPU
  std::string no_gpu_reason;               // why none is visible (all: each probe skips with it)
};

struct ProbeRun {
  Json facts_patch = Json::object();  // {"probe": {...}}
  Json results = Json::array();       // one result record per probe, for the report
};

// The largest k the MLA verify probe covers in a plan: the what-if sweep's (SweepOptions::max_k,
// src/rules/sweep.hpp), so that every k of the support matrix has its own probe result.
inline constexpr int kMlaVerifySweepMaxK = 8;

// Specs the facts imply. auto: mqa_logits at the plan's next_n (DSA models); spec_verify and
// graph_replay at the plan's k / GQA / head_dim / KV dtype / block size, or for MLA models
// (model.mla) mla_verify at every k of the sweep (1..kMlaVerifySweepMaxK and the plan's k) with
// the plan's heads per rank / latent and rope dims / KV dtype / block size, the sparse variant
// (topk = model.dsa.index_topk) for DSA models. all: adds next_n 1..8 for the indexer.
std::vector<Json> plan_probe_specs(const Json& facts, const std::string& mode);

// probe.ran, probe.mqa_logits.next_n.<n>.status, probe.mqa_logits.max_native_next_n,
// probe.spec_verify.status / .reason, probe.graph_replay.status / .reason,
// probe.mla_verify.k.<k>.status / .reason, probe.mla_verify.variant (dense | sparse) and
// .kv_dtype (bf16 | fp8: the dtype the probe ran, the plan's).
Json probe_facts_patch(const std::vector<Json>& results);

ProbeRun run_plan_probes(const Json& facts, const PlanProbeOptions& opts);

}  // namespace specprobe::probes
