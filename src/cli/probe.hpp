// `specprobe probe`: runs the probe kernels standalone with explicit shapes, each in an isolated
// child process, and prints a table (or JSON). `specprobe __probe-child` (hidden) is the child.
// Exit codes (returned, decided by the caller): 0 every probe pass/skip, 1 any fail or crash,
// 2 bad arguments, 3 any error (could not determine).
#pragma once
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "common/error.hpp"
#include "common/json.hpp"
#include "probes/runner.hpp"

namespace specprobe {

struct ProbeOptions {
  std::vector<std::string> kinds{"mqa_logits", "spec_verify", "graph_replay", "mla_verify"};  // or "all"
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
  int batch = 0;     // 0 = probe default (tiny; bench sizes with --bench)
  int context = 0;
  int seed = 1;
  bool bench = false;
  int tiles_per_cta = 0;
  std::string lengths;  // MQA logits: "random" (default) or "full"
  int splits = -1;
  double timeout_s = 30;
  std::string format = "text";  // text | json
  bool in_process = false;      // debugging: no child process
  // --stack: ask the --python environment's DeepGEMM / FlashInfer / Triton instead (probes/stack_probes.hpp).
  // One shape: every --next-n, and the first of --heads/--head-dim/--block-kv (DeepGEMM),
  // --gqa/--heads-kv/--k/--sv-head-dim/--kv-dtype/--block-size (FlashInfer, Triton).
  bool stack = false;
  std::string python;
  std::vector<std::string> stack_libs{"deep_gemm", "flashinfer", "triton"};
  double stack_timeout_s = 600;
};

struct ProbeChildOptions {
  std::string specs_json;
};

// `kinds`: the probe table the command knows (a test binary passes the product's plus its
// test-only probes, tests/support/test_main.hpp); the child is this binary again.
CLI::App* add_probe_command(CLI::App& app, ProbeOptions& opts);
int run_probe_command(const ProbeOptions& opts, const std::vector<probes::ProbeKind>& kinds = probes::probe_kinds());
CLI::App* add_probe_child_command(CLI::App& app, ProbeChildOptions& opts);
int run_probe_child_command(const ProbeChildOptions& opts,
                            const std::vector<probes::ProbeKind>& kinds = probes::probe_kinds());

// A timeout option's check: a finite number of seconds in (0, 86400] (CLI11's Range lets NaN
// through, since every comparison with it is false, and would take inf).
CLI::Validator seconds_validator();

// "1-8" / "1,2,4" / "3" -> values; error message when malformed.
Expected<std::vector<int>> parse_int_list(const std::string& text);
// The cross product the options describe, over the probes in `kinds`.
Expected<std::vector<Json>> probe_specs_from_options(
    const ProbeOptions& opts, const std::vector<probes::ProbeKind>& kinds = probes::probe_kinds());
// The stack-probe specs `probe --stack` runs (one per library in stack_libs).
Expected<std::vector<Json>> stack_specs_from_options(const ProbeOptions& opts);
// The reason every record gives when all of them are errors with the same reason (no driver, no
// GPU), else "": `probe` then prints that one line instead of a table of identical rows.
std::string common_error(const std::vector<Json>& results);
// Fixed-width table of result records (what `probe` prints).
std::string format_probe_table(const std::vector<Json>& results);

}  // namespace specprobe
