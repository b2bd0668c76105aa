// The pipeline's stages (see stages.hpp).
#include "pipeline/stages.hpp"

#include <algorithm>
#include <filesystem>
#include <set>

#include "common/excerpt.hpp"
#include "common/paths.hpp"
#include "facts/derive.hpp"
#include "gpu/gpu_info.hpp"
#include "inputs/checkpoint/checkpoint.hpp"
#include "inputs/installed_libs.hpp"
#include "inputs/model_config.hpp"
#include "inputs/serving.hpp"
#include "pipeline/suppressions.hpp"
#include "rules/sweep.hpp"

namespace fs = std::filesystem;

namespace specprobe::stages {
namespace {

// The GPU evaluated when the driver reports none and none was declared.
constexpr const char* kFallbackGpu = "H100";

}  // namespace

Expected<ServingFile> read_plans(const CheckRequest& req) {
  if (req.file.empty() && req.argv.empty())
    return usage_error("check needs a FILE, or a command line after `--` (specprobe check -- vllm serve MODEL ...)");
  ReadOptions options;
  options.process_environment = req.process_environment;
  for (const auto& kv : req.env) {
    const size_t eq = kv.find('=');
    const std::string name = kv.substr(0, eq);
    if (eq == std::string::npos || name.empty() || !std::all_of(name.begin(), name.end(), [](char c) {
          return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
        }) || std::isdigit(static_cast<unsigned char>(name[0])))
      return usage_error(fmt::format("--env expects NAME=VALUE, got '{}'", kv));
    options.env[name] = kv.substr(eq + 1);
  }
  if (!req.argv.empty()) {
    auto parsed = read_serving_argv(req.argv, options);
    if (!parsed) return parsed.error();
    ServingFile f;
    f.path = parsed->path;
    f.plans.push_back(std::move(*parsed));
    return f;
  }
  auto f = req.file == "-" ? read_serving_text(req.text, "<stdin>", options) : read_serving_plans(req.file, options);
  if (!f) return f.error();
  return f;
}

std::string no_server_text() {
  return "no vLLM or SGLang server is started here (expected `vllm serve MODEL ...`, `python -m "
         "vllm.entrypoints.openai.api_server ...`, `python -m sglang.launch_server ...`, `sglang serve ...`, or a "
         "container running one)";
}

Status use_plan(const CheckRequest& req, ParsedServing plan, Report& report, Json& facts,
                std::map<std::string, SourceLocation>& locations) {
  facts = std::move(plan.facts);
  if (!req.engine.empty()) facts["engine"]["name"] = req.engine;
  locations = std::move(plan.locations);
  report.input_path = plan.path;
  report.input_form = std::string(to_string(plan.form));
  report.server = plan.server;
  for (const auto& n : plan.notes) report.notes.push_back({n.severity, n.message, n.where});
  for (const auto& u : plan.unknown)
    report.notes.push_back(
        {"info", fmt::format("option '{}' is not modelled by specprobe; kept as given ({})", excerpt(u.name), excerpt(u.value)),
         u.where});
  return Ok{};
}

Status add_python(const CheckRequest& req, const Services& services, Report& report, Json& facts,
                  std::string& python_executable) {
  if (req.python.empty()) return Ok{};
  auto py = services.discover_python(req.python);
  if (!py) return py.error();
  if (!py->warning.empty()) report.notes.push_back({"warning", py->warning, {}});
  facts["python"] = py->facts;
  python_executable = py->executable;
  return Ok{};
}

Status add_libs(const CheckRequest& req, Json& facts) {
  std::vector<LibVersion> libs;
  for (const auto& d : req.site_packages) {
    auto found = read_site_packages(d);
    if (!found) return found.error();
    libs.insert(libs.end(), found->begin(), found->end());
  }
  // Import order: the first directory holding a distribution is the one Python imports (later
  // entries override earlier ones in add_lib_facts, so read them last to first).
  if (const Json* dirs = find_fact(facts, "python.site_packages"); dirs && dirs->is_array())
    for (auto d = dirs->rbegin(); d != dirs->rend(); ++d) {
      auto found = read_site_packages(d->get<std::string>());
      if (!found) return found.error();
      libs.insert(libs.end(), found->begin(), found->end());
    }
  for (const auto& arg : req.libs) {
    auto l = parse_lib_arg(arg);
    if (!l) return l.error();
    libs.push_back(*l);
  }
  // What the deploy file states (image tag, pip line, pins next to it) for the libraries that
  // nothing above gives.
  auto given = [&](const std::string& key) {
    return std::any_of(libs.begin(), libs.end(), [&](const LibVersion& l) { return l.key == key; });
  };
  const std::string engine = fact_string(facts, "engine.name").value_or("vllm");
  if (auto v = fact_string(facts, "deploy.engine_version"); v && !given(engine))
    libs.push_back({engine, *v, fact_string(facts, "deploy.engine_version_source").value_or("the deploy file")});
  if (const Json* pins = find_fact(facts, "deploy.lib_pins"); pins && pins->is_object())
    for (auto it = pins->begin(); it != pins->end(); ++it)
      if (!given(it.key()) && it.value().contains("version") && it.value()["version"].is_string())
        libs.push_back({it.key(), it.value()["version"].get<std::string>(), it.value().value("source", "a pin next to the deploy file")});
  add_lib_facts(facts, libs);
  return Ok{};
}

Status add_model(const CheckRequest& req, Report& report, Json& facts, std::string& dir_out) {
  std::string dir = req.model;
  if (dir.empty()) {
    const auto id = fact_string(facts, "model.id");
    std::error_code ec;
    if (id && fs::exists(*id, ec) && (!req.argv.empty() || inside_tree(*id, fs::path(req.file).parent_path()))) {
      dir = *id;  // a command line is named by the user; a config's path is read inside its tree only
    } else if (id && fs::exists(*id, ec)) {  // a config under review may name any local path (SECURITY.md)
      report.notes.push_back({"warning",
                              fmt::format("model '{}' lies outside the directory of {}: not read (pass --model "
                                          "DIR to check that checkpoint)",
                                          excerpt_name(*id), fs::path(req.file).filename().string()),
                              {}});
    } else if (auto cached = id ? find_in_hf_cache(*id) : std::nullopt) {
      dir = *cached;
      report.notes.push_back(
          {"info", fmt::format("model '{}' read from the Hugging Face cache: {}", excerpt_name(*id), *cached), {}});
    } else if (id && looks_like_repo_id(*id)) {
      report.notes.push_back({"info",
                              fmt::format("model '{}' is not a local directory and not in the Hugging Face cache "
                                          "(HF_HUB_CACHE, HF_HOME/hub or ~/.cache/huggingface/hub): model facts are "
                                          "unknown (pass --model DIR or populate the HF cache; specprobe never "
                                          "downloads)",
                                          excerpt_name(*id)),
                              {}});
    } else if (id) {
      report.notes.push_back({"info",
                              fmt::format("model '{}' is not a local directory: model facts are unknown (pass "
                                          "--model DIR with the checkpoint or its config.json)",
                                          excerpt_name(*id)),
                              {}});
    } else
      report.notes.push_back({"info", "no model given: model facts are unknown (pass --model DIR)", {}});
  }
  if (dir.empty()) return Ok{};
  auto cfg = read_model_config(dir);
  if (!cfg) return cfg.error();
  const int tp = static_cast<int>(fact_int(facts, "serve.tp").value_or(1));
  Json mf = model_facts(*cfg, tp);
  const Json* given_id = find_fact(facts, "model.id");
  const Json id = given_id ? *given_id : Json(nullptr);
  facts["model"] = mf.contains("model") ? mf["model"] : mf;
  if (!id.is_null()) facts["model"]["id"] = id;
  for (const auto& n : cfg->notes) report.notes.push_back({"info", n, {cfg->path}});
  dir_out = cfg->dir;
  return Ok{};
}

Status add_checkpoint(const std::string& dir, Report& report, Json& facts) {
  if (dir.empty()) return Ok{};
  auto a = analyze_checkpoint(dir, facts);
  if (!a) return a.error();
  for (const char* key : {"checkpoint", "quant"})
    if (a->facts.contains(key)) facts[key] = a->facts[key];
  report.checkpoint = a->summary;
  for (const auto& n : a->notes)
    report.notes.push_back({n.severity == "info" ? "info" : "warning", n.message, {n.file}});
  return Ok{};
}

Status add_gpu(const CheckRequest& req, const Services& services, Report& report, Json& facts) {
  if (req.gpu != "auto") {
    auto g = declared_gpu_facts(req.gpu);
    if (!g) return g.error();
    facts["gpu"] = *g;
    report.notes.push_back({"info",
                            fmt::format("evaluating for a declared GPU: {} ({}), from specprobe's table",
                                        (*g)["name"].get<std::string>(), gpu_arch_label(Json{{"gpu", *g}})),
                            {}});
    return Ok{};
  }
  const DriverReport dr = services.query_gpus();
  facts["driver"]["loaded"] = dr.loaded;
  if (dr.driver_version > 0) facts["driver"]["version"] = dr.driver_version;
  if (dr.loaded && !dr.gpus.empty()) {
    facts["gpu"] = gpu_facts(dr.gpus.front());
    facts["gpu"]["count"] = dr.gpus.size();
    if (dr.gpus.size() > 1) {
      bool mixed = false;
      for (const auto& g : dr.gpus) mixed |= g.name != dr.gpus.front().name;
      report.notes.push_back({mixed ? "warning" : "info",
                              fmt::format("{} GPUs visible; evaluating device 0 ({}){}", dr.gpus.size(),
                                          dr.gpus.front().name, mixed ? " — the GPUs differ, check each with --gpu" : ""),
                              {}});
    }
    return Ok{};
  }
  if (auto hidden = driver_without_device(dr)) return *hidden;
  auto g = declared_gpu(kFallbackGpu);
  facts["gpu"] = *declared_gpu_facts(kFallbackGpu);
  facts["gpu"]["fallback"] = true;
  const std::string why = dr.problem ? dr.problem->message : "no GPU found";
  facts["gpu"]["fallback_reason"] = why;
  report.notes.push_back({"warning",
                          fmt::format("no GPU to query ({}); evaluating for a declared {} instead — pass "
                                      "--gpu NAME (e.g. H200, B200, GB10, sm_90) to choose",
                                      why, g->name),
                          {}});
  return Ok{};
}

void add_probes(const CheckRequest& req, const Services& services, Report& report, const Json& facts, Json& inputs) {
  const bool gpu_present = fact_string(facts, "gpu.source").value_or("") == "driver";
  if (req.probes == "off" || (req.probes == "auto" && !gpu_present)) {
    inputs["probe"]["ran"] = false;
    inputs["probe"]["reason"] = req.probes == "off" ? "--probes off" : "no GPU to run probes on";
    return;
  }
  if (services.progress && gpu_present) {
    std::string names;
    const auto specs = probes::plan_probe_specs(facts, req.probes);
    for (const auto& sp : specs) names += (names.empty() ? "" : ", ") + sp.value("probe", std::string("?"));
    services.progress(fmt::format("running {} probe{} on {}: {} ...", specs.size(), specs.size() == 1 ? "" : "s",
                                  fact_string(facts, "gpu.name").value_or("the GPU"), names));
  }
  probes::PlanProbeOptions po;
  po.mode = req.probes;
  po.gpu_present = gpu_present;
  if (!gpu_present)
    po.no_gpu_reason = fact_string(facts, "gpu.fallback_reason")
                           .value_or("evaluating for the declared " + fact_string(facts, "gpu.name").value_or("GPU") +
                                     ", which probes cannot measure from here");
  probes::ProbeRun run = services.run_probes(facts, po);
  inputs.merge_patch(run.facts_patch);
  report.probes = run.results;
}

void add_stack_probes(const CheckRequest& req, const Services& services, const std::string& python_executable,
                      Report& report, const Json& facts, Json& inputs) {
  if (req.python.empty() || req.stack_probes == "off") {
    inputs["stack"]["ran"] = false;
    inputs["stack"]["reason"] = req.python.empty() ? "no --python given" : "--stack-probes off";
    return;
  }
  probes::StackProbeOptions so;
  so.python = req.python;
  so.timeout_s = req.stack_timeout_s;
  so.use_cache = req.stack_cache;
  so.progress = services.progress;
  if (const Json* dirs = find_fact(facts, "python.site_packages"); dirs && dirs->is_array())
    for (const auto& d : *dirs)
      if (d.is_string()) so.site_packages.push_back(d.get<std::string>());
  // The GPU the adapters run on, as the driver reports it: an answer is cached for this GPU only
  // (a declared GPU is not the one they run on, so nothing is cached then).
  if (fact_string(facts, "gpu.source").value_or("") == "driver")
    so.machine = fmt::format("{}|sm{}|{}|{}|driver {}|{} GPUs", fact_string(facts, "gpu.name").value_or("?"),
                             fact_int(facts, "gpu.sm").value_or(0), fact_string(facts, "gpu.uuid_hash").value_or(""),
                             fact_string(facts, "gpu.pci_bus_id").value_or(""), fact_int(facts, "driver.version").value_or(0),
                             fact_int(facts, "gpu.count").value_or(1));
  if (!python_executable.empty()) {  // the interpreter answered add_libs already
    so.python = python_executable;
    so.ask_interpreter = false;
  }
  probes::StackRun run = services.run_stack_probes(facts, so);
  inputs.merge_patch(run.facts_patch);
  for (const auto& r : run.results) {
    report.probes.push_back(r);
    const std::string st = r.value("status", "error");
    std::string msg = fmt::format("stack probe {} {}: {}", r.value("library", "?"),
                                  r.value("version", Json()).is_string() ? r["version"].get<std::string>() : "(version unknown)", st);
    if (!r.value("reason", "").empty()) msg += " (" + r["reason"].get<std::string>() + ")";
    if (r.value("error_text", Json()).is_string()) msg += ": `" + r["error_text"].get<std::string>() + "`";
    if (r.value("cached", false)) msg += " (the answer of an earlier run with the same library build and GPU; --no-cache asks again)";
    report.notes.push_back({st == "error" ? "warning" : "info", msg, {}});
  }
}

void add_engine_check(const CheckRequest& req, const Services& services, const std::string& python_executable,
                      const std::string& model_dir, Report& report, const Json& facts, Json& inputs) {
  Json& ec = inputs["engine_check"];
  if (req.python.empty() || !req.engine_check) {
    ec["requested"] = false;
    ec["ran"] = false;
    ec["reason"] = req.python.empty() ? "no --python given" : "--no-engine";
    return;
  }
  const std::string engine = fact_string(facts, "engine.name").value_or("vllm");
  const std::string label = engine == "sglang" ? "SGLang" : "vLLM";
  // Installed in that Python: its version was read from one of the interpreter's site-packages.
  bool installed = false;
  const std::string source = fact_string(facts, "lib." + engine + ".source").value_or("");
  if (const Json* dirs = find_fact(facts, "python.site_packages"); dirs && dirs->is_array())
    for (const auto& d : *dirs)
      installed |= d.is_string() && source == "site-packages:" + d.get<std::string>();
  if (!installed) {
    ec["requested"] = true;
    ec["ran"] = false;
    ec["engine"] = engine;
    ec["engine_label"] = label;
    ec["outcome"] = "not-installed";
    ec["status"] = nullptr;
    ec["reason"] = fmt::format("{} is not installed in {}: install {} in --python, or omit --python (or pass --no-engine)",
                               label, req.python, engine);
    report.notes.push_back({"warning", "engine check: " + ec["reason"].get<std::string>(), {}});
    return;
  }
  // The matrix cells the installed engine re-evaluates: every k for the plan's backend and KV dtype,
  // and every backend and KV dtype for the plan's k (one adapter run answers them all).
  Json cells = Json::array();
  if (req.matrix && fact_bool(facts, "spec.enabled").value_or(false)) {
    const SupportMatrix axes = sweep_axes(facts);
    const bool vllm_backends = engine == "vllm" && fact_string(facts, "gpu.vendor").value_or("nvidia") == "nvidia";
    const std::string b0 = fact_string(facts, "attention.selected").value_or("");
    const std::string kv0 = fact_string(facts, "serve.kv_cache_dtype").value_or("auto");
    const int k0 = static_cast<int>(fact_int(facts, "spec.k").value_or(0));
    std::set<std::string> ids;
    auto add = [&](int k, const std::string& b, const std::string& kv) {
      if (k < 1) return;
      const std::string backend = vllm_backends ? b : std::string();
      if (ids.insert(engine_cell_id(k, backend, kv)).second) cells.push_back(probes::engine_cell(engine, k, backend, kv));
    };
    for (int k : axes.ks) add(k, b0, kv0);
    for (const auto& b : axes.backends)
      for (const auto& kv : axes.kv_cache_dtypes) add(k0, b, kv);
  }
  std::vector<std::string> unresolved;
  Json request = probes::engine_request(facts, model_dir, cells, unresolved);
  probes::EngineCheckOptions eo;
  eo.python = python_executable.empty() ? req.python : python_executable;
  eo.timeout_s = req.engine_timeout_s;
  eo.use_cache = req.engine_cache;
  eo.progress = services.progress;
  if (const Json* dirs = find_fact(facts, "python.site_packages"); dirs && dirs->is_array())
    for (const auto& d : *dirs)
      if (d.is_string()) eo.site_packages.push_back(d.get<std::string>());
  const Json record = services.run_engine_check(request, eo);
  inputs.merge_patch(probes::engine_facts_patch(record, unresolved));
  // Where the finding anchors: the first option as written whose name the engine's message
  // mentions (--kv-cache-dtype, kv_cache_dtype, a speculative-config key), else the model.
  std::string at = "model.id";
  const std::string message = fact_string(inputs, "engine_check.message").value_or("");
  if (const Json* given = find_fact(facts, "options.given"); given && given->is_array() && !message.empty()) {
    auto mentions = [&](std::string name) {
      while (!name.empty() && name[0] == '-') name.erase(0, 1);
      if (name.size() < 3) return false;
      std::string under = name, dash = name;
      std::replace(under.begin(), under.end(), '-', '_');
      std::replace(dash.begin(), dash.end(), '_', '-');
      auto word = [&](const std::string& w) {  // as a whole word: "port" is not in "supported"
        auto inner = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'; };
        for (size_t p = message.find(w); p != std::string::npos; p = message.find(w, p + 1))
          if ((p == 0 || !inner(message[p - 1])) && (p + w.size() >= message.size() || !inner(message[p + w.size()])))
            return true;
        return false;
      };
      return word(under) || word(dash);
    };
    for (size_t i = 0; i < given->size() && at == "model.id"; ++i) {
      const Json& g = (*given)[i];
      if (!g.is_object() || !g.value("flag", Json()).is_string()) continue;
      if (g.value("value", Json()).is_object())
        for (const auto& [key, _] : g["value"].items())
          if (mentions(key)) {
            at = fmt::format("options.given.{}.value.{}", i, key);
            break;
          }
      if (at == "model.id" && mentions(g["flag"].get<std::string>())) at = fmt::format("options.given.{}", i);
    }
  }
  inputs["engine_check"]["at"] = at;
  Json r = record;
  r["probe"] = "engine_" + engine;
  r["name"] = "engine check " + engine;
  report.probes.push_back(r);
  const std::string outcome = record.value("status", "adapter-error");
  const std::string version = record.value("version", Json()).is_string() ? record["version"].get<std::string>() : "(version unknown)";
  std::string msg = fmt::format("engine check: {} {} says {}", label, version, outcome);
  const double took = record.value("duration_s", Json(0.0)).is_number() ? record["duration_s"].get<double>() : 0.0;
  if (record.value("cached", false)) msg += fmt::format(" (answered from the cache in {:.3f} s)", took);
  else if (record.value("timing_s", Json()).is_object() && record["timing_s"].value("import", Json()).is_number())
    msg += fmt::format(" ({:.1f} s: engine import {:.1f} s, plan {:.1f} s)", took, record["timing_s"]["import"].get<double>(),
                       record["timing_s"].value("plan", Json(0.0)).is_number() ? record["timing_s"]["plan"].get<double>() : 0.0);
  if (!cells.empty()) msg += fmt::format("; {} matrix cells asked", cells.size());
  if (!unresolved.empty()) {
    std::string list;
    for (const auto& u : unresolved) list += (list.empty() ? "" : ", ") + u;
    msg += "; not shown to the engine (value unresolved here, unknown to this check): " + list;
  }
  if (outcome == "adapter-error") msg += ": " + record.value("reason", std::string());
  if (outcome == "missing-input" && record["plan"].is_object() && record["plan"]["missing"].is_string())
    msg += ": supply " + record["plan"]["missing"].get<std::string>();
  report.notes.push_back({outcome == "adapter-error" || !unresolved.empty() ? "warning" : "info", msg, {}});
}

Status add_suppressions(const CheckRequest& req, const Services& services, Report& report) {
  auto entries = ignore_args(req.ignore);
  if (!entries) return entries.error();
  if (req.suppression_file) {
    auto file = read_suppression_file(suppression_file_for(req.file));
    if (!file) return file.error();
    entries->insert(entries->end(), file->begin(), file->end());
  }
  for (const auto& e : *entries) {
    if (services.catalog->find(e.id) || services.catalog->find_advisory(e.id)) continue;
    const std::string near = services.catalog->closest_id(e.id);
    const std::string msg =
        fmt::format("unknown rule id '{}'{}", excerpt(e.id), near.empty() ? "" : fmt::format(" (did you mean {}?)", near));
    return e.source == "--ignore" ? usage_error("--ignore: " + msg) : input_error(msg, e.where);
  }
  apply_suppressions(report, *entries, services.today());
  return Ok{};
}

}  // namespace specprobe::stages
