// `specprobe matrix` (see matrix.hpp).
#include "cli/matrix.hpp"

#include <algorithm>
#include <cstdio>

#include <CLI/CLI.hpp>

#include "common/output_file.hpp"
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

}  // namespace

CLI::App* add_matrix_command(CLI::App& app, MatrixOptions& o) {
  CLI::App* cmd = app.add_subcommand("matrix", "the support matrix (k x backend x kv-cache dtype) for each GPU: a table, JSON, or an NFD feature file");
  cmd->add_option("--model", o.check.request.model, "checkpoint directory (or its config.json)");
  cmd->add_option("--gpu", o.gpus, "comma-separated GPUs (H100,H200,B200,GB10, sm_90, ...), or auto for this node's GPU");
  cmd->add_option("--config", o.config, "a serving config (vLLM YAML/JSON or a script) whose other options hold");
  cmd->add_option("--engine", o.check.request.engine, "vllm or sglang")->check(CLI::IsMember({"vllm", "sglang"}));
  cmd->add_option("--python", o.check.request.python, "the deployment's Python: read installed library versions from its site-packages");
  cmd->add_option("--site-packages", o.check.request.site_packages, "a site-packages directory to read library versions from");
  cmd->add_option("--lib", o.check.request.libs, "set a library version: NAME=VERSION");
  cmd->add_option("--probes", o.check.request.probes, "run probe kernels: auto, off, all")->check(CLI::IsMember({"auto", "off", "all"}));
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
  if (o.check.request.model.empty() && o.config.empty()) {
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
  CheckOptions quiet = o.check;
  quiet.quiet = true;  // one progress line per GPU, not per probe
  auto services = cli_services(quiet);
  if (!services) return exit_code(services.error().kind);
  const auto show = terminal_progress(o.check.quiet);
  std::vector<Report> reports;
  for (size_t i = 0; i < gpus.size(); ++i) {
    CheckRequest c = check_request(o.check);
    c.gpu = gpus[i];
    c.matrix = true;
    c.file = o.config;
    if (o.config.empty()) {
      // No config: the engine's defaults for the model.
      c.argv = o.check.request.engine == "sglang"
                   ? std::vector<std::string>{"python3", "-m", "sglang.launch_server", "--model-path", o.check.request.model}
                   : std::vector<std::string>{"vllm", "serve", o.check.request.model};
    }
    if (show) show(fmt::format("[{}/{}] {} ...", i + 1, gpus.size(), gpus[i]));
    auto r = run_check(c, *services);
    if (!r) {
      if (show) show("");
      std::fprintf(stderr, "specprobe: %s\n", r.error().str().c_str());
      return exit_code(r.error().kind);
    }
    reports.push_back(std::move(*r));
  }
  if (show) show("");

  std::string out;
  if (o.format == "json") {
    out = matrix_report_json(gpus, reports, o.check.request.model.empty() ? Json(nullptr) : Json(o.check.request.model),
                             o.config.empty() ? Json(nullptr) : Json(o.config))
              .dump(2, ' ', false, Json::error_handler_t::replace) +
          "\n";
  } else if (o.format == "nfd") {
    std::string model = o.model_name;
    if (model.empty()) model = !o.check.request.model.empty() ? o.check.request.model : fact_string(reports[0].facts, "model.id").value_or("model");
    out = render_nfd(reports[0], model);
  } else {
    const std::string what = fmt::format("{}{}{}", o.check.request.model.empty() ? "" : o.check.request.model,
                                         o.check.request.model.empty() || o.config.empty() ? "" : " with ",
                                         o.config.empty() ? "" : o.config);
    out = render_matrix_table(gpus, reports, what);
  }
  // Files are replaced atomically (common/output_file.hpp): NFD's worker may read features.d at
  // any moment, and skips the dot-prefixed temporary file.
  std::vector<Error> problems;
  if (auto st = o.output.empty() ? write_stream(stdout, out) : write_file_atomic(o.output, out); !st) problems.push_back(st.error());
  if (!o.junit_file.empty())
    if (auto st = write_file_atomic(o.junit_file, reports_to_junit(reports)); !st) problems.push_back(st.error());
  int rc = 0;
  for (const auto& e : problems) {
    std::fprintf(stderr, "specprobe: %s\n", e.str().c_str());
    rc = exit_code(e.kind);
  }
  return rc;
}

}  // namespace specprobe
