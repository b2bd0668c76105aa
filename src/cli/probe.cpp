// `specprobe probe` and the hidden `__probe-child` subcommand (see probe.hpp).
#include "cli/probe.hpp"

#include <cmath>
#include <cstdio>

#include "inputs/versions/python_env.hpp"
#include "probes/probe_common.hpp"
#include "probes/runner.hpp"
#include "probes/stack_kinds.hpp"
#include "probes/stack_probes.hpp"

namespace specprobe {

Expected<std::vector<Json>> probe_specs_from_options(const ProbeOptions& o,
                                                     const std::vector<probes::ProbeKind>& table) {
  std::vector<const probes::ProbeKind*> kinds;
  for (const auto& k : o.kinds) {
    if (k == "all") {  // the product's probes (the ones that take shapes)
      for (const auto& pk : table)
        if (pk.option_specs) kinds.push_back(&pk);
      continue;
    }
    const probes::ProbeKind* found = nullptr;
    std::string names;
    for (const auto& pk : table) {
      if (k == pk.name) found = &pk;
      names += std::string(pk.name) + ", ";
    }
    if (!found) return usage_error("unknown probe '" + k + "' (" + names + "all)");
    kinds.push_back(found);
  }
  const probes::CommonSpec common = [&](Json s) {
    if (o.batch > 0) s["batch"] = o.batch;
    if (o.context > 0) s["context"] = o.context;
    if (o.bench) s["bench"] = true;
    s["seed"] = o.seed;
    return s;
  };
  std::vector<Json> specs;
  for (const auto* kind : kinds) {
    if (!kind->option_specs) {  // a probe without shape keys (a test binary's own)
      specs.push_back(common({{"probe", kind->name}}));
      continue;
    }
    auto mine = kind->option_specs(o, common);
    if (!mine) return mine.error();
    for (auto& s : *mine) specs.push_back(std::move(s));
  }
  return specs;
}

namespace {

std::string stack_library_names() {
  std::string names;
  for (const auto& k : probes::stack_kinds()) names += (names.empty() ? "" : ", ") + std::string(k.library);
  return names;
}

}  // namespace

Expected<std::vector<Json>> stack_specs_from_options(const ProbeOptions& o) {
  auto ns = parse_int_list(o.next_n);
  if (!ns) return ns.error();
  const probes::StackShape shape{o, *ns, o.batch > 0 ? o.batch : 2, o.context > 0 ? o.context : 200};
  std::vector<Json> specs;
  std::vector<std::string> libs = o.stack_libs;
  if (libs.empty())
    for (const auto& k : probes::stack_kinds()) libs.push_back(k.library);
  for (const auto& lib : libs) {
    const probes::StackKind* kind = probes::find_stack_kind(lib);
    if (!kind) return usage_error("unknown stack library '" + lib + "' (" + stack_library_names() + ")");
    specs.push_back(probes::stack_run_spec(lib, kind->option_params(shape)));
  }
  return specs;
}

namespace {

// probe --stack: one validated record per library; table or JSON; exit 0 pass/skip, 1 fail, 3 error.
int run_stack_probe_command(const ProbeOptions& o) {
  auto specs = stack_specs_from_options(o);
  if (!specs) {
    std::fprintf(stderr, "specprobe: error: %s\n", specs.error().message.c_str());
    return 2;
  }
  auto python = resolve_python(o.python.empty() ? std::string("python3") : o.python);
  if (!python) {
    std::fprintf(stderr, "specprobe: error: --python: %s\n", python.error().message.c_str());
    return 2;
  }
  probes::StackProbeOptions so;
  so.python = *python;
  so.timeout_s = o.stack_timeout_s;
  probes::StackRun run = probes::run_stack_specs(*specs, so);
  if (o.format == "json") {
    std::printf("%s\n", Json({{"results", run.results}, {"facts", run.facts_patch}})
                            .dump(2, ' ', false, Json::error_handler_t::replace)
                            .c_str());
  } else {
    for (const auto& r : run.results) {
      std::printf("%-10s %-12s %-6s %s\n", r.value("library", "?").c_str(),
                  r.value("version", Json()).is_string() ? r["version"].get<std::string>().c_str() : "-",
                  r.value("status", "?").c_str(), r.value("reason", "").c_str());
      if (r.value("error_text", Json()).is_string())
        std::printf("           error_text: %s\n", r["error_text"].get<std::string>().c_str());
      for (const auto& c : r.value("cases", Json::array()))
        std::printf(
            "    %-6s %s%s%s\n", c.value("status", "?").c_str(), c.value("name", "?").c_str(),
            c.value("reason", "").empty() ? "" : (" -- " + c["reason"].get<std::string>()).c_str(),
            c.value("error_text", Json()).is_string() ? (": " + c["error_text"].get<std::string>()).c_str() : "");
    }
  }
  int code = 0;
  for (const auto& r : run.results) {
    const std::string st = r.value("status", "error");
    if (st == probes::kFail) code = std::max(code, 1);
    if (st == probes::kError) code = 3;
  }
  return code;
}

}  // namespace

std::string common_error(const std::vector<Json>& results) {
  if (results.size() < 2) return {};
  std::string reason;
  for (const auto& r : results) {
    if (r.value("status", "") != probes::kError) return {};
    std::string why = r.value("reason", "");
    if (r.contains("cuda_error") && r["cuda_error"].is_string()) why = r["cuda_error"].get<std::string>() + ": " + why;
    if (why.empty() || (!reason.empty() && why != reason)) return {};
    reason = why;
  }
  return reason;
}

std::string format_probe_table(const std::vector<Json>& results) {
  std::string out = fmt::format("{:<72} {:<6} {:>9} {:>10} {:>5} {:>7} {:>4}  {}\n", "probe", "status", "max_rel",
                                "time_us", "regs", "smem_KB", "occ", "reason / evidence");
  for (const auto& r : results) {
    const Json m = r.value("metrics", Json::object());
    const Json e = r.value("evidence", Json::object());
    auto num = [](const Json& j, const char* key, const char* f) -> std::string {
      if (!j.contains(key) || !j[key].is_number()) return "-";
      return fmt::format(fmt::runtime(f), j[key].get<double>());
    };
    std::string why = r.value("reason", "");
    if (r.contains("cuda_error")) why = r["cuda_error"].get<std::string>() + ": " + why;
    if (m.contains("pct_of_roofline"))
      why = fmt::format("{:.1f}% of HBM roofline (copy ceiling {:.2f} TB/s) {}", m["pct_of_roofline"].get<double>(),
                        m.value("copy_ceiling_bytes_per_s", 0.0) / 1e12, why);
    const double smem_kb = e.contains("dynamic_smem_bytes")
                               ? (e.value("dynamic_smem_bytes", 0.0) + e.value("static_smem_bytes", 0.0)) / 1024.0
                               : NAN;
    out +=
        fmt::format("{:<72} {:<6} {:>9} {:>10} {:>5} {:>7} {:>4}  {}\n", r.value("name", "?"), r.value("status", "?"),
                    num(m, "max_rel_err", "{:.2e}"), num(m, "time_us_median", "{:.1f}"), num(e, "registers", "{:.0f}"),
                    std::isnan(smem_kb) ? std::string("-") : fmt::format("{:.1f}", smem_kb),
                    num(e, "occupancy_blocks_per_sm", "{:.0f}"), why.substr(0, 200));
  }
  return out;
}

CLI::Validator seconds_validator() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        double v = 0;
        try {
          size_t used = 0;
          v = std::stod(text, &used);
          if (used != text.size()) return "'" + text + "' is not a number of seconds";
        } catch (const std::exception&) {
          return "'" + text + "' is not a number of seconds";
        }
        if (!(v > 0 && v <= 86400)) return "'" + text + "' is not a number of seconds in (0, 86400]";
        return "";
      },
      "SECONDS");
}

CLI::App* add_probe_command(CLI::App& app, ProbeOptions& o) {
  CLI::App* cmd = app.add_subcommand("probe", "Run the probe kernels on this GPU with explicit shapes");
  std::string names;
  for (const auto& pk : probes::probe_kinds()) names += std::string(pk.name) + ", ";
  cmd->add_option("--probe", o.kinds, names + "all")->delimiter(',');
  cmd->add_option("--next-n", o.next_n, "MQA logits next_n values: 1-8, 1,2,4");
  cmd->add_option("--heads", o.heads, "MQA logits (indexer) heads: 16,32,64,128")->delimiter(',');
  cmd->add_option("--head-dim", o.head_dim, "MQA logits head_dim: 64,128")->delimiter(',');
  cmd->add_option("--block-kv", o.block_kv, "MQA logits block_kv: 32,64,256")->delimiter(',');
  cmd->add_option("--gqa", o.gqa, "spec-verify GQA ratios (1-16)")->delimiter(',');
  cmd->add_option("--kv-dtype", o.kv_dtype, "spec-verify and MLA verify KV dtype: bf16,fp8")->delimiter(',');
  cmd->add_option("--k", o.k, "spec-verify and MLA verify num_speculative_tokens (query rows = k+1)")->delimiter(',');
  cmd->add_option("--sv-head-dim", o.sv_head_dim, "spec-verify head_dim: 64,128,256")->delimiter(',');
  cmd->add_option("--block-size", o.block_size, "spec-verify and MLA verify KV block size: 1,16,64")->delimiter(',');
  cmd->add_option("--mla-heads", o.mla_heads, "MLA verify query heads per rank (1-128; default 16,128)")
      ->delimiter(',');
  cmd->add_option("--mla-latent-dim", o.mla_latent_dim, "MLA verify latent dims (kv_lora_rank: 512; DeepSeek-V4: 448)")
      ->delimiter(',');
  cmd->add_option("--mla-rope-dim", o.mla_rope_dim, "MLA verify rope dims (qk_rope_head_dim: 64)")->delimiter(',');
  cmd->add_option("--mla-v-dim", o.mla_v_dim,
                  "MLA verify output dims: the latent (default) or latent + rope (DeepSeek-V4: 512, K and V one row)")
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--mla-topk", o.mla_topk, "MLA verify top-k per row: 0 = dense, else sparse (index_topk: 2048, 512)")
      ->delimiter(',');
  // Sizes are checked here (exit 2): 0 or a negative value is a typing error, not "the default".
  cmd->add_option("--heads-kv", o.heads_kv, "spec-verify KV heads (default 2, 8 with --bench)")
      ->check(CLI::Range(1, 128));
  cmd->add_option("--batch", o.batch, "requests (default: tiny; 256 / 64 with --bench)")
      ->check(CLI::Range(1, probes::kMaxProbeBatch));
  cmd->add_option("--context", o.context, "longest request's context (default: 300; 8192 with --bench)")
      ->check(CLI::Range(1, probes::kMaxProbeContext));
  cmd->add_option("--seed", o.seed, "input seed");
  cmd->add_flag("--bench", o.bench, "time at realistic sizes and print % of the HBM roofline");
  cmd->add_option("--tiles-per-cta", o.tiles_per_cta, "MQA logits, mma.sync kernel: 128-token tiles per CTA (tuning)")
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--lengths", o.lengths,
                  "MQA logits request lengths: random (in [next_n, context]) or full (all = context)")
      ->check(CLI::IsMember({"random", "full"}));
  cmd->add_option("--splits", o.splits, "spec-verify KV splits (0 = auto)")->check(CLI::Range(0, 4096));
  cmd->add_option("--timeout", o.timeout_s, "seconds a probe may run before it is killed (default 30)")
      ->check(seconds_validator());
  cmd->add_option("--format", o.format, "text or json")->check(CLI::IsMember({"text", "json"}));
  cmd->add_flag("--in-process", o.in_process, "run probes in this process (debugging; no isolation)");
  cmd->add_flag("--stack", o.stack,
                "ask the installed DeepGEMM / FlashInfer / Triton of --python instead of specprobe's kernels");
  cmd->add_option("--python", o.python, "with --stack: the deployment's Python (default python3 on PATH)");
  cmd->add_option("--stack-lib", o.stack_libs, "with --stack: " + stack_library_names() + " (default: all)")
      ->delimiter(',');
  cmd->add_option("--stack-timeout", o.stack_timeout_s, "with --stack: seconds one library's probe may run")
      ->check(seconds_validator());
  return cmd;
}

int run_probe_command(const ProbeOptions& o, const std::vector<probes::ProbeKind>& kinds) {
  if (o.stack) return run_stack_probe_command(o);
  auto specs = probe_specs_from_options(o, kinds);
  if (!specs) {
    std::fprintf(stderr, "specprobe: error: %s\n", specs.error().message.c_str());
    return 2;
  }
  std::vector<Json> results;
  if (o.in_process) {
    for (const auto& s : *specs) results.push_back(probes::run_probe_in_process(s, kinds));
  } else {
    probes::RunnerOptions ro;
    ro.child_command = probes::self_child_command();
    ro.timeout_s = o.timeout_s;
    results = probes::run_probes_isolated(*specs, ro);
  }
  if (o.format == "json") {
    std::printf("%s\n", Json(results).dump(2, ' ', false, Json::error_handler_t::replace).c_str());
  } else if (const std::string why = common_error(results); !why.empty()) {
    // Every probe stopped on the same thing (no driver, no GPU): one line, not a row per probe.
    std::fprintf(stderr, "specprobe: error: %s (%zu probe%s not run)\n", why.c_str(), results.size(),
                 results.size() == 1 ? "" : "s");
  } else {
    std::fputs(format_probe_table(results).c_str(), stdout);
  }
  int code = 0;
  for (const auto& r : results) {
    const std::string st = r.value("status", "error");
    if (st == probes::kFail || st == probes::kCrash) code = std::max(code, 1);
    if (st == probes::kError) code = 3;
  }
  return code;
}

CLI::App* add_probe_child_command(CLI::App& app, ProbeChildOptions& o) {
  CLI::App* cmd = app.add_subcommand("__probe-child", "");  // empty description: hidden from --help
  cmd->group("");
  auto* specs = cmd->add_option("--specs", o.specs_json, "JSON array of probe specs");
  auto* on_stdin = cmd->add_flag("--specs-on-stdin", o.specs_on_stdin, "read the specs from stdin, one line");
  specs->excludes(on_stdin);
  cmd->require_option(1);
  return cmd;
}

int run_probe_child_command(const ProbeChildOptions& o, const std::vector<probes::ProbeKind>& kinds) {
  return o.specs_on_stdin ? probes::run_probe_child_stdin(kinds) : probes::run_probe_child_json(o.specs_json, kinds);
}

}  // namespace specprobe
