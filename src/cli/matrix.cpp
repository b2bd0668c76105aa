// `specprobe matrix` (see matrix.hpp).
#include "cli/matrix.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>

#include <CLI/CLI.hpp>

#include "cli/progress.hpp"
#include "common/output_file.hpp"
#include "report/printers.hpp"

namespace fs = std::filesystem;

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

Expected<long> parse_duration(const std::string& text) {
  if (text == "0") return 0L;
  size_t used = 0;
  long n = -1;
  try {
    n = std::stol(text, &used);
  } catch (const std::exception&) {
  }
  const std::string unit = used < text.size() ? text.substr(used) : "";
  const long mult = unit == "s" ? 1 : unit == "m" ? 60 : unit == "h" ? 3600 : unit == "d" ? 86400 : 0;
  if (n <= 0 || mult == 0 || n > 366L * 86400 / mult)
    return usage_error(
        fmt::format("'{}' is not a duration (a whole number with s, m, h or d, e.g. 24h; 0 for none)", text));
  return n * mult;
}

std::string rfc3339_utc(long long seconds) {
  const std::time_t t = static_cast<std::time_t>(seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

CLI::App* add_matrix_command(CLI::App& app, MatrixOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "matrix",
      "the support matrix (k x backend x kv-cache dtype) for each GPU: a table, JSON, or an NFD feature file");
  cmd->add_option("--model", o.check.request.model, "checkpoint directory (or its config.json)");
  cmd->add_option("--gpu", o.gpus,
                  "comma-separated GPUs (H100,H200,B200,GB10, sm_90, ...), or auto for this node's GPU");
  cmd->add_option("--config", o.config, "a serving config (vLLM YAML/JSON or a script) whose other options hold");
  cmd->add_option("--engine", o.check.request.engine, "vllm or sglang")->check(CLI::IsMember({"vllm", "sglang"}));
  cmd->add_option("--python", o.check.request.python,
                  "the deployment's Python: read installed library versions from its site-packages and ask its vLLM / "
                  "SGLang about every cell (one engine run per GPU)");
  cmd->add_flag_callback(
      "--no-engine", [&o] { o.check.request.engine_check = false; }, "with --python: do not ask the installed engine");
  cmd->add_flag_callback(
      "--no-cache", [&o] { o.check.request.engine_cache = o.check.request.stack_cache = false; },
      "a cold run: ask the engine again, and build the stack probes' kernels in a private cache");
  cmd->add_option("--site-packages", o.check.request.site_packages,
                  "a site-packages directory to read library versions from");
  cmd->add_option("--lib", o.check.request.libs, "set a library version: NAME=VERSION")->check(lib_name_validator());
  cmd->add_option("--probes", o.check.request.probes, "run probe kernels: auto, off, all")
      ->check(CLI::IsMember({"auto", "off", "all"}));
  cmd->add_option("--format", o.format, "text, json, or nfd (Node Feature Discovery feature file; one GPU)")
      ->check(CLI::IsMember({"text", "json", "nfd"}));
  cmd->add_option("--output,-o", o.output, "write to FILE instead of stdout");
  cmd->add_option("--junit", o.junit_file, "also write JUnit XML, one testsuite per GPU, to FILE");
  cmd->add_option("--model-name", o.model_name,
                  "the model's name in NFD labels (default: the --model directory's name)");
  cmd->add_option("--nfd-expiry", o.nfd_expiry,
                  "with --format nfd: NFD drops the labels this long after writing (# +expiry-time): 24h (default), "
                  "90m, 2d; 0 for never");
  cmd->add_flag(
      "--nfd-include-warnings", o.nfd_include_warnings,
      "with --format nfd: count cells that work with warnings as working (default: only cells with no finding)");
  cmd->add_option("--rules-dir", o.check.rules_dir,
                  "load rules from DIR instead of the built-in catalog (development)");
  cmd->add_option("--advisories-dir", o.check.advisories_dir,
                  "load advisories from DIR instead of the built-in database (development)");
  cmd->add_flag("--quiet,-q", o.check.quiet, "no progress on stderr");
  cmd->add_flag("--progress", o.check.progress,
                "show progress on stderr also when it is not a terminal (one line per phase, for CI logs)");
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
  long expiry_s = 0;
  if (o.format == "nfd") {
    auto d = parse_duration(o.nfd_expiry);
    if (!d) {
      std::fprintf(stderr, "specprobe: error: --nfd-expiry: %s\n", d.error().message.c_str());
      return 2;
    }
    expiry_s = *d;
  }
  auto services = cli_services(o.check);
  if (!services) return exit_code(services.error().kind);
  // Each GPU's phases, prefixed with which GPU it is.
  const ProgressSink sink = std::move(services->progress);
  std::string prefix;
  if (sink) services->progress = [&](const std::string& line) { sink(line.empty() ? line : prefix + line); };
  std::vector<Report> reports;
  for (size_t i = 0; i < gpus.size(); ++i) {
    CheckRequest c = check_request(o.check);
    c.gpu = gpus[i];
    c.matrix = true;
    c.file = o.config;
    if (o.config.empty()) {
      // No config: the engine's defaults for the model.
      c.argv = o.check.request.engine == "sglang" ? std::vector<std::string>{"python3", "-m", "sglang.launch_server",
                                                                             "--model-path", o.check.request.model}
                                                  : std::vector<std::string>{"vllm", "serve", o.check.request.model};
    }
    prefix = fmt::format("[{}/{}] {}: ", i + 1, gpus.size(), gpus[i]);
    auto r = run_check(c, *services);
    if (!r) {
      services->progress = nullptr;
      std::fprintf(stderr, "specprobe: %s\n", r.error().str().c_str());
      return exit_code(r.error().kind);
    }
    reports.push_back(std::move(*r));
  }
  services->progress = nullptr;

  std::string out;
  if (o.format == "json") {
    out = matrix_report_json(gpus, reports, o.check.request.model.empty() ? Json(nullptr) : Json(o.check.request.model),
                             o.config.empty() ? Json(nullptr) : Json(o.config))
              .dump(2, ' ', false, Json::error_handler_t::replace) +
          "\n";
  } else if (o.format == "nfd") {
    NfdOptions no;
    no.model = o.model_name;
    if (no.model.empty())
      no.model = !o.check.request.model.empty() ? o.check.request.model : reports[0].plan.model.id.value_or("model");
    no.include_warnings = o.nfd_include_warnings;
    if (expiry_s > 0)
      no.expiry = rfc3339_utc(
          std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
              .count() +
          expiry_s);
    // NFD labels describe this node: a GPU specprobe assumed (no driver here) would label the node
    // with another machine's answers.
    if (reports[0].plan.gpu.fallback) {
      std::fprintf(stderr,
                   "specprobe: error: --format nfd --gpu auto: this node has no GPU driver to query (%s); NFD "
                   "labels describe the node's own GPU: run it on the GPU node, or pass --gpu NAME to label for a "
                   "declared GPU\n",
                   reports[0].plan.gpu.fallback_reason.value_or("no libcuda.so.1").c_str());
      return exit_code(ErrorKind::environment);
    }
    auto nfd = render_nfd(reports[0], no);
    if (!nfd) {
      std::fprintf(stderr, "specprobe: %s\n", nfd.error().str().c_str());
      return exit_code(nfd.error().kind);
    }
    for (const auto& n : nfd->notes) std::fprintf(stderr, "specprobe: note: %s\n", n.c_str());
    out = nfd->text;
  } else {
    const std::string what = fmt::format("{}{}{}", o.check.request.model.empty() ? "" : o.check.request.model,
                                         o.check.request.model.empty() || o.config.empty() ? "" : " with ",
                                         o.config.empty() ? "" : o.config);
    out = render_matrix_table(gpus, reports, what);
  }
  // Not supported on some GPU: exit 1, as check does (the matrix is the report either way).
  int rc = 0;
  for (const auto& r : reports)
    if (r.verdict == "not-supported") rc = 1;
  // Files are replaced atomically (common/output_file.hpp): NFD's worker may read features.d at
  // any moment, and skips the dot-prefixed temporary file.
  std::vector<Error> problems;
  if (auto st = o.output.empty() ? write_stream(stdout, out) : write_file_atomic(o.output, out); !st)
    problems.push_back(st.error());
  if (!o.junit_file.empty())
    if (auto st = write_file_atomic(o.junit_file, reports_to_junit(reports)); !st) problems.push_back(st.error());
  for (const auto& e : problems) {
    std::fprintf(stderr, "specprobe: %s\n", e.str().c_str());
    rc = exit_code(e.kind);
  }
  return rc;
}

}  // namespace specprobe
