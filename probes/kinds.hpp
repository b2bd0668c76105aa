// The probe table: each kernel probe is one ProbeKind, defined in its own file next to its kernel
// (probes/<name>.cpp, kernels/<name>.cu) and listed once in probe_kinds() (probes/kinds.cpp).
// Everything else enumerates the table: `specprobe check` sizes each probe's specs from the plan
// (plan_specs) and folds each probe's results into facts (record); `specprobe probe` builds specs
// from the shape options (option_specs) and dispatches the child (run); the what-if sweep, the
// verdict's missing facts and SP9001 read the answer records each `record` writes
// (probe.answers, facts/answers.hpp: what was measured, for which plan facts), not a probe's own
// facts.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/json.hpp"

namespace specprobe::probes {

// The shapes `specprobe probe` is asked for (its options; cli/probe.cpp binds them). Each probe's
// option_specs reads the fields it uses.
struct ProbeShapeOptions {
  std::string next_n = "1-8";
  std::vector<int> heads{64};
  std::vector<int> head_dim{128};
  std::vector<int> block_kv{64};
  std::vector<int> gqa{1, 2, 4, 6, 8, 16};
  std::vector<std::string> kv_dtype{"bf16", "fp8"};
  std::vector<int> k{3};
  std::vector<int> sv_head_dim{128};
  std::vector<int> block_size{16};
  // MLA verify: query heads per rank, latent (kv_lora_rank) and rope dims, the output's dims (0 =
  // the latent), top-k (0 = dense). --k, --kv-dtype and --block-size apply as to spec-verify.
  std::vector<int> mla_heads{16, 128};
  std::vector<int> mla_latent_dim{512};
  std::vector<int> mla_rope_dim{64};
  int mla_v_dim = 0;
  std::vector<int> mla_topk{0};
  int heads_kv = 0;  // 0 = probe default
  int tiles_per_cta = 0;
  std::string lengths;  // MQA logits: "random" (default) or "full"
  int splits = -1;
};

// "1-8" / "1,2,4" / "3" -> values (a range spans at most 65); a usage error naming the item.
Expected<std::vector<int>> parse_int_list(const std::string& text);

// Adds the options every spec of one `probe` run shares (batch, context, seed, bench).
using CommonSpec = std::function<Json(Json)>;

struct ProbeKind {
  const char* name;
  const char* what;
  Json (*run)(const Json& spec);  // in the probe child
  // The specs the plan's facts imply (MODE auto: the plan's shape; all: its neighbours too), in
  // order. Null: none (a test binary's own probes).
  std::vector<Json> (*plan_specs)(const Json& facts, const std::string& mode) = nullptr;
  // `specprobe probe --probe NAME`: the specs the shape options ask for (a usage error names the
  // option). Null: one spec with only the common keys.
  Expected<std::vector<Json>> (*option_specs)(const ProbeShapeOptions& o, const CommonSpec& common) = nullptr;
  // Folds this probe's results (in spec order) into FACTS: its own facts under probe.<name>
  // (what its SP40xx rules read) and one answer record each (facts/answers.hpp append_answer).
  // Null: none.
  void (*record)(const std::vector<Json>& results, Json& facts) = nullptr;
};

// The product's probes, in the order their specs run and their answers are listed.
const std::vector<ProbeKind>& probe_kinds();

}  // namespace specprobe::probes
