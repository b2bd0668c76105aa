// `specprobe matrix` (see matrix.hpp).
#include "cli/matrix.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <unistd.h>

#include <CLI/CLI.hpp>

#include "build_info.hpp"
#include "report/printers.hpp"

namespace specprobe {
namespace {

std::vector<std::string> split_gpus(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s + ",") {
    if (c == ',') {
      while (!cur.empty() && cur.back() == ' ') cur.pop_back();
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else if (c != ' ' || !cur.empty()) {
      cur += c;
    }
  }
  return out;
}

std::string cell_token(const MatrixCell& c) {
  if (c.verdict == "fails") return "x";
  if (c.verdict == "unknown") return "?";
  if (c.indexer == "flattened") return "flat";
  return c.warnings.empty() ? "ok" : "ok*";
}

std::string requested_kv(const Report& r) { return fact_string(r.facts, "serve.kv_cache_dtype").value_or("auto"); }

// Largest working k per backend for the plan's kv-cache dtype (-1: none).
Json max_k_by_backend(const Report& r) {
  Json out = Json::object();
  if (!r.matrix) return out;
  const std::string kv = requested_kv(r);
  for (const auto& b : r.matrix->backends) {
    int best = -1;
    for (const auto& c : r.matrix->cells)
      if (c.backend == b && c.kv_cache_dtype == kv && c.verdict == "works") best = std::max(best, c.k);
    const std::string name = b.empty() ? fact_string(r.facts, "attention.selected").value_or("default") : b;
    out[name] = best >= 0 ? Json(best) : Json(nullptr);
  }
  return out;
}

std::string render_table(const std::vector<std::string>& gpus, const std::vector<Report>& reports, const std::string& what) {
  std::string out = fmt::format("specprobe matrix: {}\n", what);
  out += "cells: k = num_speculative_tokens; ok, ok* with warnings, flat = DSA indexer flattened, x fails, ? unknown\n";
  for (size_t i = 0; i < reports.size(); ++i) {
    const Report& r = reports[i];
    const Json* sm = find_fact(r.facts, "gpu.sm");
    out += fmt::format("\n{} ({}, sm_{}): plan {}", gpus[i], fact_string(r.facts, "gpu.name").value_or("unknown"),
                       sm && !sm->is_null() ? (sm->is_string() ? sm->get<std::string>() : sm->dump()) : "?", r.verdict);
    if (!r.matrix) {
      out += "; no matrix\n";
      continue;
    }
    const SupportMatrix& m = *r.matrix;
    out += fmt::format("; largest working k with {} / {}: {}\n", fact_string(r.facts, "attention.selected").value_or("-"),
                       requested_kv(r), m.max_working_k ? std::to_string(*m.max_working_k) : "none");
    std::string head = fmt::format("  {:<22} {:<16}", "backend", "kv cache");
    for (int k : m.ks) head += fmt::format(" {:>4}", fmt::format("k={}", k));
    out += head + "\n";
    for (const auto& b : m.backends)
      for (const auto& kv : m.kv_cache_dtypes) {
        std::string line = fmt::format("  {:<22} {:<16}", b.empty() ? fact_string(r.facts, "attention.selected").value_or("-") : b, kv);
        for (int k : m.ks)
          for (const auto& c : m.cells)
            if (c.k == k && c.backend == b && c.kv_cache_dtype == kv) line += fmt::format(" {:>4}", cell_token(c));
        out += line + "\n";
      }
  }
  return out;
}

Json render_json(const std::vector<std::string>& gpus, const std::vector<Report>& reports, const MatrixOptions& o) {
  Json j = Json::object();
  j["schema_version"] = "1.0.0";
  j["tool"] = {{"name", "specprobe"}, {"version", kToolVersion}, {"git_sha", kGitSha}};
  j["model"] = o.check.model.empty() ? Json(nullptr) : Json(o.check.model);
  j["config"] = o.config.empty() ? Json(nullptr) : Json(o.config);
  Json list = Json::array();
  for (size_t i = 0; i < reports.size(); ++i) {
    const Report& r = reports[i];
    const Json full = report_to_json(r);
    Json g = Json::object();
    g["gpu"] = gpus[i];
    g["name"] = r.facts.value("gpu", Json::object()).value("name", Json(nullptr));
    g["sm"] = r.facts.value("gpu", Json::object()).value("sm", Json(nullptr));
    g["engine"] = r.engine;
    g["attention_backend"] = r.facts.value("attention", Json::object()).value("selected", Json(nullptr));
    g["kv_cache_dtype"] = requested_kv(r);
    g["verdict"] = r.verdict;
    g["max_k_by_backend"] = max_k_by_backend(r);
    g["findings"] = Json::array();
    for (const auto& res : full["results"])
      if (res["status"] == "fail") g["findings"].push_back({{"id", res["id"]}, {"severity", res["severity"]}, {"suppressed", !res["suppressed"].is_null()}});
    g["matrix"] = full["matrix"];
    list.push_back(std::move(g));
  }
  j["gpus"] = list;
  return j;
}

}  // namespace

CLI::App* add_matrix_command(CLI::App& app, MatrixOptions& o) {
  CLI::App* cmd = app.add_subcommand("matrix", "the support matrix (k x backend x kv-cache dtype) for each GPU: a table, JSON, or an NFD feature file");
  cmd->add_option("--model", o.check.model, "checkpoint directory (or its config.json)");
  cmd->add_option("--gpu", o.gpus, "comma-separated GPUs (H100,H200,B200,GB10, sm_90, ...), or auto for this node's GPU");
  cmd->add_option("--config", o.config, "a serving config (vLLM YAML/JSON or a script) whose other options hold");
  cmd->add_option("--engine", o.check.engine, "vllm or sglang")->check(CLI::IsMember({"vllm", "sglang"}));
  cmd->add_option("--python", o.check.python, "the deployment's Python: read installed library versions from its site-packages");
  cmd->add_option("--site-packages", o.check.site_packages, "a site-packages directory to read library versions from");
  cmd->add_option("--lib", o.check.libs, "set a library version: NAME=VERSION");
  cmd->add_option("--probes", o.check.probes, "run probe kernels: auto, off, all")->check(CLI::IsMember({"auto", "off", "all"}));
  cmd->add_option("--format", o.format, "text, json, or nfd (Node Feature Discovery feature file; one GPU)")
      ->check(CLI::IsMember({"text", "json", "nfd"}));
  cmd->add_option("--output,-o", o.output, "write to FILE instead of stdout");
  cmd->add_option("--junit", o.junit_file, "also write JUnit XML, one testsuite per GPU, to FILE");
  cmd->add_option("--model-name", o.model_name, "the model's name in NFD labels (default: the --model directory's name)");
  cmd->add_option("--rules-dir", o.check.rules_dir, "load rules from DIR instead of the built-in catalog (development)");
  cmd->add_flag("--quiet,-q", o.check.quiet, "no progress on stderr");
  return cmd;
}

int run_matrix_command(const MatrixOptions& o) {
  if (o.check.model.empty() && o.config.empty()) {
    std::fprintf(stderr, "specprobe: error: matrix needs --model DIR and/or --config FILE\n");
    return 2;
  }
  const std::vector<std::string> gpus = split_gpus(o.gpus);
  if (gpus.empty()) {
    std::fprintf(stderr, "specprobe: error: --gpu needs at least one GPU name\n");
    return 2;
  }
  if (o.format == "nfd" && gpus.size() != 1) {
    std::fprintf(stderr, "specprobe: error: --format nfd describes one node: give one --gpu (or auto)\n");
    return 2;
  }
  const bool progress = !o.check.quiet && isatty(STDERR_FILENO) == 1;
  std::vector<Report> reports;
  for (size_t i = 0; i < gpus.size(); ++i) {
    CheckOptions c = o.check;
    c.gpu = gpus[i];
    c.no_matrix = false;
    c.quiet = c.quiet || progress;  // one progress line per GPU, not per probe
    c.file = o.config;
    if (o.config.empty()) {
      // No config: the engine's defaults for the model.
      c.argv = o.check.engine == "sglang"
                   ? std::vector<std::string>{"python3", "-m", "sglang.launch_server", "--model-path", o.check.model}
                   : std::vector<std::string>{"vllm", "serve", o.check.model};
    }
    if (progress) std::fprintf(stderr, "\rspecprobe: [%zu/%zu] %s ...\033[K", i + 1, gpus.size(), gpus[i].c_str());
    auto r = run_check(c);
    if (!r) {
      if (progress) std::fputs("\r\033[K", stderr);
      std::fprintf(stderr, "specprobe: %s\n", r.error().str().c_str());
      return exit_code(r.error().kind);
    }
    reports.push_back(std::move(*r));
  }
  if (progress) std::fputs("\r\033[K", stderr);

  std::string out;
  if (o.format == "json") {
    out = render_json(gpus, reports, o).dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
  } else if (o.format == "nfd") {
    std::string model = o.model_name;
    if (model.empty()) model = !o.check.model.empty() ? o.check.model : fact_string(reports[0].facts, "model.id").value_or("model");
    out = render_nfd(reports[0], model);
  } else {
    const std::string what = fmt::format("{}{}{}", o.check.model.empty() ? "" : o.check.model,
                                         o.check.model.empty() || o.config.empty() ? "" : " with ",
                                         o.config.empty() ? "" : o.config);
    out = render_table(gpus, reports, what);
  }
  int rc = 0;
  if (o.output.empty()) {
    std::fwrite(out.data(), 1, out.size(), stdout);
  } else {
    // Written beside and renamed into place: NFD's worker may read features.d at any moment.
    const std::string tmp = o.output + ".tmp";
    bool ok = static_cast<bool>(std::ofstream(tmp, std::ios::binary) << out);
    ok = ok && std::rename(tmp.c_str(), o.output.c_str()) == 0;
    if (!ok) {
      std::remove(tmp.c_str());
      std::fprintf(stderr, "specprobe: error: cannot write %s\n", o.output.c_str());
      rc = 3;
    }
  }
  if (!o.junit_file.empty() && !(std::ofstream(o.junit_file, std::ios::binary) << reports_to_junit(reports))) {
    std::fprintf(stderr, "specprobe: error: cannot write %s\n", o.junit_file.c_str());
    rc = 3;
  }
  return rc;
}

}  // namespace specprobe
