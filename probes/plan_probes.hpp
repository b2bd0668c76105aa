// The probes `specprobe check` runs for a plan: shapes derived from facts at tiny sizes, run in
// isolated children, results folded back into facts under "probe." (names in probes/README.md).
// plan_probe_specs and probe_facts_patch are GPU-independent; run_plan_probes starts children.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "common/isolated_runner.hpp"
#include "common/json.hpp"
#include "probes/kinds.hpp"

namespace specprobe::probes {

struct PlanProbeOptions {
  std::string mode = "auto";               // auto | off | all
  double timeout_s = 20;                   // per probe
  std::vector<std::string> child_command;  // empty = self_child_command()
  bool gpu_present = true;                 // auto runs nothing without a GPU
  std::string no_gpu_reason;               // why none is visible (all: each probe skips with it)
  // A probe child started early (prestart_plan_probes), adopted for the probes' first batch; an
  // unused one is killed when its last owner lets go.
  std::shared_ptr<PrestartedChild> prestarted;
};

// A probe child started now, with the options run_plan_probes will run with, so that its start-up
// (exec, cuInit, context, module load) overlaps the check's own work until the specs are known;
// null when it cannot start.
std::shared_ptr<PrestartedChild> prestart_plan_probes(const PlanProbeOptions& opts);

struct ProbeRun {
  Json facts_patch = Json::object();  // {"probe": {...}}
  Json results = Json::array();       // one result record per probe, for the report
};

// The specs the facts imply: every probe's plan_specs in table order (probes/kinds.hpp). auto:
// mqa_logits at the plan's next_n (DSA models); spec_verify and graph_replay at the plan's k / GQA
// / head_dim / KV dtype / block size, or for MLA models (model.mla) mla_verify at every k of the
// sweep with the plan's heads per rank / latent and rope dims / KV dtype / block size, the sparse
// variant for DSA models. all: adds next_n 1..8 for the indexer. off: none.
std::vector<Json> plan_probe_specs(const Json& facts, const std::string& mode,
                                   const std::vector<ProbeKind>& kinds = probe_kinds());

// probe.ran, and each probe's record of its results (its own facts under probe.<name> and the
// answer records in probe.answers, facts/answers.hpp).
Json probe_facts_patch(const std::vector<Json>& results, const std::vector<ProbeKind>& kinds = probe_kinds());

ProbeRun run_plan_probes(const Json& facts, const PlanProbeOptions& opts);

}  // namespace specprobe::probes
