// The pipeline's stages (see stages.hpp).
#include "pipeline/stages.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>

#include "common/excerpt.hpp"
#include "common/paths.hpp"
#include "common/version.hpp"
#include "facts/derive.hpp"
#include "gpu/gpu_info.hpp"
#include "inputs/checkpoint/checkpoint.hpp"
#include "inputs/checkpoint/model_config.hpp"
#include "inputs/serving.hpp"
#include "inputs/versions/installed_libs.hpp"
#include "pipeline/project_settings.hpp"
#include "pipeline/suppressions.hpp"
#include "probes/engine_envs.hpp"
#include "resolve/hub_settings.hpp"
#include "rules/ids.hpp"
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
  options.engine = req.engine;
  for (const auto& kv : req.env) {
    const size_t eq = kv.find('=');
    const std::string name = kv.substr(0, eq);
    if (eq == std::string::npos || name.empty() ||
        !std::all_of(name.begin(), name.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }) ||
        std::isdigit(static_cast<unsigned char>(name[0])))
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

namespace {

// Token-like strings in the plan's values (an HF_TOKEN=hf_... line, --api-key sk-...) cut to a
// prefix, so no report format holds a secret the deploy file carries. The model names stay whole:
// they are looked up.
void redact_plan_secrets(Json& v, const std::string& path = {}) {
  if (path == "model.id" || path == "spec.draft_model" || path == "serve.tokenizer") return;
  if (v.is_string()) {
    if (has_secret(v.get_ref<const std::string&>())) v = redact_secrets(v.get_ref<const std::string&>());
  } else if (v.is_object()) {
    for (auto it = v.begin(); it != v.end(); ++it)
      redact_plan_secrets(it.value(), path.empty() ? it.key() : path + "." + it.key());
  } else if (v.is_array()) {
    for (auto& x : v) redact_plan_secrets(x, path + "[]");
  }
}

}  // namespace

Status use_plan(const CheckRequest& req, ParsedServing plan, Report& report, Json& facts,
                std::map<std::string, SourceLocation>& locations) {
  facts = std::move(plan.facts);
  redact_plan_secrets(facts);
  if (!req.engine.empty()) facts["engine"]["name"] = req.engine;
  locations = std::move(plan.locations);
  report.input_path = plan.path;
  report.input_form = std::string(to_string(plan.form));
  report.server = plan.server;
  for (const auto& n : plan.notes) report.notes.push_back({n.severity, n.message, n.where});
  for (const auto& u : plan.unknown)
    report.notes.push_back(
        {"info",
         fmt::format("option '{}' is not modelled by specprobe; kept as given ({})", excerpt(u.name), excerpt(u.value)),
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
        libs.push_back({it.key(), it.value()["version"].get<std::string>(),
                        it.value().value("source", "a pin next to the deploy file")});
  add_lib_facts(facts, libs);
  return Ok{};
}

std::map<std::string, std::string> ResolvedModels::dirs_by_id() const {
  std::map<std::string, std::string> out;
  for (const resolve::Resolution* r : {&model, &draft, &tokenizer}) {
    if (!r->resolved() || r->id.empty() || r->origin == "local path") continue;
    std::error_code ec;
    const fs::path abs = fs::absolute(r->dir, ec);
    if (!ec && fs::is_directory(abs, ec)) out[r->id] = abs.lexically_normal().string();
  }
  return out;
}

namespace {

Json resolution_fact(const resolve::Resolution& r) {
  Json j = {{"id", r.id}, {"origin", r.origin.empty() ? Json() : Json(r.origin)}};
  if (r.resolved()) j["dir"] = r.dir;
  if (!r.repo.empty()) {
    j["repo"] = r.repo;
    j["revision"] = r.revision;
    j["commit"] = r.commit;
    j["endpoint_host"] = r.endpoint_host;
    j["fetched_at"] = r.fetched_at;
    j["requests"] = r.requests;
    j["bytes"] = r.bytes;
    j["shards"] = r.shards;
    j["header_bytes"] = r.header_bytes;
  }
  if (!r.failure.empty()) {
    j["failure_kind"] = r.failure_kind;
    j["failure"] = r.failure;
  }
  return j;
}

// "1.2 MB" for a byte count.
std::string human_bytes(uint64_t n) {
  if (n < 1024) return fmt::format("{} B", n);
  if (n < 1024 * 1024) return fmt::format("{:.1f} KiB", n / 1024.0);
  return fmt::format("{:.1f} MiB", n / (1024.0 * 1024.0));
}

// The report's line for a resolution: where the metadata came from, or why it could not be read.
void note_resolution(const resolve::Resolution& r, Report& report) {
  for (const auto& n : r.notes) report.notes.push_back({"warning", n, {}});
  const std::string what = r.role == "draft" ? "draft model" : r.role == "tokenizer" ? "tokenizer" : "model";
  if (!r.resolved()) {
    // Not reading a model is not a problem of the file: info unless the Hub failed us.
    const bool hub = r.failure_kind != "not-local" && r.failure_kind != "no-resolve" &&
                     r.failure_kind != "outside-tree" && r.failure_kind != "offline" && r.failure_kind != "not-given";
    report.notes.push_back({r.failure_kind == "outside-tree" || hub ? "warning" : "info", r.failure, {}});
    return;
  }
  if (r.origin == "--model" || r.origin == "local path") return;  // the user named the directory
  std::string line = fmt::format("{} '{}' read from {}", what, excerpt_name(r.id, 64), r.describe());
  if (r.origin == "hub")
    line += fmt::format(": metadata files and {} shard header{} ({} in {} request{}; no weights)", r.shards,
                        r.shards == 1 ? "" : "s", human_bytes(r.bytes), r.requests, r.requests == 1 ? "" : "s");
  report.notes.push_back({"info", line, {}});
}

// The variable that makes the deploy download from ModelScope, when one does ("" otherwise).
std::string modelscope_switch(const Json& facts) {
  for (const char* name : {"VLLM_USE_MODELSCOPE", "SGLANG_USE_MODELSCOPE"})
    if (auto v = fact_string(facts, std::string("env.") + name); v && resolve::env_true(*v))
      return fmt::format("{}={}", name, excerpt(*v, 8));
  return {};
}

}  // namespace

Status resolve_models(const CheckRequest& req, const Services& services, Report& report, Json& facts,
                      ResolvedModels& out) {
  resolve::ResolveOptions o;
  o.model_flag = req.model;
  o.no_resolve = req.no_resolve;
  o.config_file = req.argv.empty() ? req.file : std::string();
  o.modelscope = modelscope_switch(facts);
  for (const auto& kv : req.model_dirs) {
    const size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == kv.size())
      return usage_error(fmt::format("--model-dir expects ID=DIR, got '{}'", excerpt(kv, 64)));
    std::error_code ec;
    const std::string dir = kv.substr(eq + 1);
    if (!fs::exists(dir, ec)) return usage_error(fmt::format("--model-dir {}: no such directory", excerpt(kv, 64)));
    o.model_dirs[kv.substr(0, eq)] = dir;
  }
  const resolve::Resolver fallback(nullptr);
  const resolve::Resolver& resolver = services.resolver ? *services.resolver : fallback;
  const auto deadline =
      resolve::Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(req.network_timeout_s * 1000));
  auto progress = [&](const std::string& line) {
    if (services.progress) services.progress(line);
  };
  const auto id = fact_string(facts, "model.id");
  resolve::ModelRef model{"model", id.value_or(""), fact_string(facts, "serve.revision").value_or(""), "--revision",
                          true};
  if (id || !req.model.empty()) {
    out.model = resolver.resolve(model, o, deadline, progress);
  } else {
    out.model.role = "model";
    out.model.failure_kind = "not-given";
    out.model.failure = "no model given: model facts are unknown (pass --model DIR)";
  }
  facts["resolve"]["model"] = resolution_fact(out.model);
  note_resolution(out.model, report);
  // The draft: a separate checkpoint the speculative config names (not n-gram or suffix matching,
  // not a Python class path, not the served model itself).
  if (auto draft = fact_string(facts, "spec.draft_model"); draft && fact_bool(facts, "spec.enabled").value_or(false)) {
    const std::string method = fact_string(facts, "spec.method").value_or("");
    if (method != "ngram" && method != "suffix" && method != "custom_class" && *draft != id.value_or("") &&
        *draft != "[ngram]") {
      out.draft_named = true;
      resolve::ModelRef ref{"draft", *draft, fact_string(facts, "spec.draft_revision").value_or(""),
                            "speculative-config revision", true};
      out.draft = resolver.resolve(ref, o, deadline, progress);
      facts["resolve"]["draft"] = resolution_fact(out.draft);
      note_resolution(out.draft, report);
    }
  }
  if (auto tok = fact_string(facts, "serve.tokenizer"); tok && *tok != id.value_or("")) {
    out.tokenizer_named = true;
    resolve::ModelRef ref{"tokenizer", *tok, fact_string(facts, "serve.tokenizer_revision").value_or(""),
                          "--tokenizer-revision", false};
    out.tokenizer = resolver.resolve(ref, o, deadline, progress);
    facts["resolve"]["tokenizer"] = resolution_fact(out.tokenizer);
    if (!out.tokenizer.resolved() && out.tokenizer.failure_kind != "not-local") note_resolution(out.tokenizer, report);
  }
  const resolve::Hub* hub = resolver.hub();
  facts["resolve"]["offline"] = req.no_resolve || !hub || hub->settings().offline;
  return Ok{};
}

Status add_model(const ResolvedModels& models, Report& report, Json& facts, std::string& dir_out) {
  const std::string dir = models.model.dir;
  // A Hub repository without config.json (Mistral's params.json format, GGUF files): nothing to read.
  std::error_code ec;
  if (!dir.empty() && models.model.origin.rfind("hub", 0) == 0 && !fs::exists(fs::path(dir) / "config.json", ec)) {
    report.notes.push_back({"warning",
                            fmt::format("model '{}': the Hub repository has no config.json at commit {}: model facts "
                                        "are unknown (pass --model DIR with a config.json)",
                                        excerpt_name(models.model.id, 64), models.model.commit.substr(0, 12)),
                            {}});
    facts["resolve"]["model"]["failure_kind"] = "no-config";
    return Ok{};
  }
  if (!dir.empty()) {
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
  }
  // The draft's config: read for its shapes; a draft whose config cannot be read is a warning (the
  // engine would fail to load it, but that is the engine check's and the rules' to say).
  if (models.draft.resolved()) {
    auto cfg = read_model_config(models.draft.dir);
    if (!cfg) {
      report.notes.push_back({"warning",
                              fmt::format("draft model '{}': {}: draft facts are unknown",
                                          excerpt_name(models.draft.id, 64), cfg.error().str()),
                              {}});
    } else {
      const Json d = model_facts(*cfg, static_cast<int>(fact_int(facts, "spec.draft_tp").value_or(1)))["model"];
      Json& out = facts["draft"];
      out = Json::object();
      for (const char* key :
           {"path", "architecture", "model_type", "hidden_size", "num_hidden_layers", "num_attention_heads",
            "num_kv_heads", "head_dim", "vocab_size", "dtype", "quant_method", "max_position_embeddings"})
        if (d.contains(key)) out[key] = d[key];
      out["weights"] = weights_inventory_from_config(*cfg, fact_string(facts, "engine.name").value_or("vllm"), "");
    }
  }
  return Ok{};
}

Status add_checkpoint(const std::string& dir, const Services& services, Report& report, Json& facts) {
  if (dir.empty()) return Ok{};
  auto a = services.analyze_checkpoint ? services.analyze_checkpoint(dir, facts) : analyze_checkpoint(dir, facts);
  if (!a) return a.error();
  for (const char* key : {"checkpoint", "quant"})
    if (a->facts.contains(key)) facts[key] = a->facts[key];
  report.checkpoint = a->summary;
  for (const auto& n : a->notes)
    report.notes.push_back({n.severity == "info" ? "info" : "warning", n.message, {n.file}});
  return Ok{};
}

Status add_gpu(const CheckRequest& req, const Services& services, Report& report, Json& facts,
               const std::map<std::string, SourceLocation>& locations) {
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
      report.notes.push_back(
          {mixed ? "warning" : "info",
           fmt::format("{} GPUs visible; evaluating device 0 ({}){}", dr.gpus.size(), dr.gpus.front().name,
                       mixed ? " — the GPUs differ, check each with --gpu" : ""),
           {}});
    }
    return Ok{};
  }
  if (auto hidden = driver_without_device(dr)) return *hidden;
  // The GPU the deploy file asks for (a Kubernetes node selector), before the fallback.
  if (const Json* p = find_fact(facts, "deploy.gpu_product");
      p && p->is_object() && p->value("value", Json()).is_string()) {
    const std::string value = (*p)["value"].get<std::string>();
    const std::string from = fmt::format("{}={}", p->value("label", std::string("a GPU label")), excerpt(value, 48));
    const auto it = locations.find("deploy.gpu_product");
    const SourceLocation at = it != locations.end() ? it->second : SourceLocation{};
    if (auto name = gpu_name_from_label(value)) {
      facts["gpu"] = *declared_gpu_facts(*name);
      facts["gpu"]["declared_from"] = at.known() ? fmt::format("{} at line {}", from, at.line) : from;
      report.notes.push_back({"info",
                              fmt::format("no GPU to query; evaluating for the GPU the deploy file asks for: {} ({}), "
                                          "from {}",
                                          (*facts["gpu"].find("name")).get<std::string>(),
                                          gpu_arch_label(Json{{"gpu", facts["gpu"]}}), from),
                              at});
      return Ok{};
    }
    report.notes.push_back(
        {"warning",
         fmt::format("the deploy file asks for GPU '{}' ({}), which is not in specprobe's table: pass "
                     "--gpu NAME",
                     excerpt(value, 48), p->value("label", std::string("a GPU label"))),
         at});
  }
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

void add_probes(const SourceContext& ctx, Report& report, const Json& facts, Json& inputs) {
  const CheckRequest& req = ctx.req;
  const Services& services = ctx.services;
  const bool gpu_present = fact_string(facts, "gpu.source").value_or("") == "driver";
  if (req.probes == "off" || (req.probes == "auto" && !gpu_present)) {
    if (ctx.probe_child) ctx.probe_child->reset();  // started for nothing: killed now
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
  if (ctx.probe_child) po.prestarted = std::move(*ctx.probe_child);
  if (!gpu_present)
    po.no_gpu_reason = fact_string(facts, "gpu.fallback_reason")
                           .value_or("evaluating for the declared " + fact_string(facts, "gpu.name").value_or("GPU") +
                                     ", which probes cannot measure from here");
  probes::ProbeRun run = services.run_probes(facts, po);
  inputs.merge_patch(run.facts_patch);
  report.probes = run.results;
}

void add_stack_probes(const SourceContext& ctx, Report& report, const Json& facts, Json& inputs) {
  const CheckRequest& req = ctx.req;
  const Services& services = ctx.services;
  const std::string& python_executable = ctx.python_executable;
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
                             fact_string(facts, "gpu.pci_bus_id").value_or(""),
                             fact_int(facts, "driver.version").value_or(0), fact_int(facts, "gpu.count").value_or(1));
  if (!python_executable.empty()) {  // the interpreter answered add_libs already
    so.python = python_executable;
    so.ask_interpreter = false;
  }
  probes::StackRun run = services.run_stack_probes(facts, so);
  inputs.merge_patch(run.facts_patch);
  for (const auto& r : run.results) {
    report.probes.push_back(r);
    const std::string st = r.value("status", "error");
    std::string msg =
        fmt::format("stack probe {} {}: {}", r.value("library", "?"),
                    r.value("version", Json()).is_string() ? r["version"].get<std::string>() : "(version unknown)", st);
    if (!r.value("reason", "").empty()) msg += " (" + r["reason"].get<std::string>() + ")";
    if (r.value("error_text", Json()).is_string()) msg += ": `" + r["error_text"].get<std::string>() + "`";
    if (r.value("cached", false))
      msg += " (the answer of an earlier run with the same library build and GPU; --no-cache asks again)";
    report.notes.push_back({st == "error" ? "warning" : "info", msg, {}});
  }
}

void add_engine_check(const SourceContext& ctx, Report& report, const Json& facts, Json& inputs) {
  const CheckRequest& req = ctx.req;
  const Services& services = ctx.services;
  const std::string& python_executable = ctx.python_executable;
  const std::string& model_dir = ctx.model_dir;
  const ResolvedModels& models = ctx.models;
  Json& ec = inputs["engine_check"];
  if ((req.python.empty() && req.engine_env.empty()) || !req.engine_check) {
    ec["requested"] = false;
    ec["ran"] = false;
    ec["reason"] = !req.engine_check ? "--no-engine" : "no --python or --engine-env given";
    return;
  }
  const std::string engine = fact_string(facts, "engine.name").value_or("vllm");
  const std::string label = engine == "sglang" ? "SGLang" : "vLLM";
  const std::string deployed = fact_string(facts, "lib." + engine + ".version").value_or("");
  const std::string deployed_from = fact_string(facts, "lib." + engine + ".source").value_or("");
  // A check that is not asked is a note, never an unknown verdict by itself (--require engine
  // makes it one): the rules and advisories decide without it.
  auto not_asked = [&](const std::string& outcome, const std::string& reason) {
    ec["requested"] = true;
    ec["ran"] = false;
    ec["engine"] = engine;
    ec["engine_label"] = label;
    ec["outcome"] = outcome;
    ec["status"] = nullptr;
    ec["reason"] = reason;
    report.notes.push_back({"warning", "engine check not asked: " + reason, {}});
  };
  // The interpreter to ask and where it imports from: --python's, or an engine environment
  // (probes/engine_envs.hpp) for the release the deploy runs.
  std::string engine_python = python_executable.empty() ? req.python : python_executable;
  std::vector<std::string> engine_site;
  if (const Json* dirs = find_fact(facts, "python.site_packages"); dirs && dirs->is_array())
    for (const auto& d : *dirs)
      if (d.is_string()) engine_site.push_back(d.get<std::string>());
  if (req.python.empty()) {
    engine_site.clear();
    const std::string envs_dir = probes::engine_envs_dir(req.engines_dir);
    if (req.engine_env == "auto") {
      std::optional<probes::EngineEnv> env;
      if (deployed.empty()) {
        // No release named: the newest environment of the engine here, said so (a deploy that
        // names none runs whatever its image or install brings, most often a recent release).
        for (auto& e : probes::list_engine_envs(envs_dir))
          if (e.engine == engine) {
            const auto v = parse_version(e.version);
            const auto best = env ? parse_version(env->version) : std::nullopt;
            if (!env || (v && (!best || *v > *best))) env = e;
          }
        if (!env) {
          not_asked("no-environment",
                    fmt::format("the deploy names no {} release and {} holds no {} environment: "
                                "`specprobe engines install {}==VERSION` makes one (or state the "
                                "release: an image tag, a pin, --lib {}=VERSION; or pass --python)",
                                label, envs_dir.empty() ? "specprobe's cache" : envs_dir, label, engine, engine));
          return;
        }
        report.notes.push_back(
            {"info",
             fmt::format("engine check: the deploy names no {} release; asked the newest environment here, {} "
                         "(state the release, e.g. --lib {}=VERSION, to ask that one)",
                         label, env->name, engine),
             {}});
        ec["environment_picked"] = "newest";
      } else {
        env = probes::find_engine_env(envs_dir, engine, deployed);
        const std::string install_cmd = fmt::format("specprobe engines install {}=={}", engine, deployed);
        if (!env && req.install_engines) {
          probes::EngineInstallOptions io;
          io.dir = envs_dir;
          io.log = [&](const std::string& line) {
            if (services.progress) services.progress("engines: " + line);
          };
          auto made = probes::install_engine_env({engine + "==" + deployed}, io);
          if (!made) {
            not_asked("no-environment", fmt::format("--install-engines could not make the {} {} environment: {}", label,
                                                    deployed, made.error().message));
            return;
          }
          report.notes.push_back(
              {"info", fmt::format("engine check: made the environment {} ({})", made->name, made->dir), {}});
          env = *made;
        }
        if (!env) {
          not_asked("no-environment",
                    fmt::format("the deploy runs {} {} and there is no environment for it in {}: `{}` "
                                "makes one (or pass --install-engines)",
                                label, deployed, envs_dir.empty() ? "specprobe's cache" : envs_dir, install_cmd));
          return;
        }
      }
      engine_python = env->python;
    } else {
      engine_python =
          fs::is_directory(req.engine_env) ? (fs::path(req.engine_env) / "bin" / "python").string() : req.engine_env;
    }
    auto py = services.discover_python(engine_python);
    if (!py) {
      not_asked("no-environment", fmt::format("the engine environment's interpreter {} cannot be asked: {}",
                                              engine_python, py.error().message));
      return;
    }
    engine_python = py->executable.empty() ? engine_python : py->executable;
    engine_site = py->site_packages;
    ec["environment"] = engine_python;
  }
  // The engine the interpreter has: read from its site-packages (whatever --lib or the deploy
  // file say the deployment runs).
  std::string installed;
  for (const auto& d : engine_site) {
    if (!installed.empty()) break;
    if (auto libs = read_site_packages(d))
      for (const auto& l : *libs)
        if (l.key == engine) installed = l.version;
  }
  if (installed.empty()) {
    not_asked("not-installed",
              fmt::format("{} is not installed in {}: install {}{} there (or in an environment of its "
                          "own: `specprobe engines install {}=={}`, then --engine-env auto), or pass --no-engine",
                          label, engine_python, engine, deployed.empty() ? "" : "==" + deployed, engine,
                          deployed.empty() ? "VERSION" : deployed));
    return;
  }
  ec["installed_version"] = installed;
  if (!deployed.empty() && deployed != installed) {
    const std::string said = fmt::format("the interpreter {} has {} {}; the deploy runs {} ({})", engine_python, label,
                                         installed, deployed, deployed_from.empty() ? "as stated" : deployed_from);
    if (req.engine_mismatch != "ask") {
      not_asked("version-mismatch",
                fmt::format("{}: its answers would be for {}, not for the release that will run. `specprobe engines "
                            "install {}=={}` makes an environment of that release (then --engine-env auto), or pass "
                            "--engine-mismatch ask to ask {} anyway",
                            said, installed, engine, deployed, installed));
      return;
    }
    ec["deploy_version"] = deployed;
    report.notes.push_back(
        {"warning",
         fmt::format("engine check: {}: the engine's answers are for {} (--engine-mismatch ask)", said, installed),
         {}});
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
      if (ids.insert(engine_cell_id(k, backend, kv)).second)
        cells.push_back(probes::engine_cell(engine, k, backend, kv));
    };
    for (int k : axes.ks) add(k, b0, kv0);
    for (const auto& b : axes.backends)
      for (const auto& kv : axes.kv_cache_dtypes) add(k0, b, kv);
    // Without backend variants (SGLang, AMD GPUs) the matrix is one backend's row per KV dtype:
    // every cell is asked.
    if (!vllm_backends)
      for (const auto& kv : axes.kv_cache_dtypes)
        for (int k : axes.ks) add(k, b0, kv);
  }
  std::vector<std::string> unresolved;
  // The adapter trusts absolute directories only (a relative one would resolve against its private
  // working directory).
  std::error_code abs_ec;
  const std::string model_abs =
      model_dir.empty() ? model_dir : fs::absolute(model_dir, abs_ec).lexically_normal().string();
  Json request = probes::engine_request(facts, abs_ec ? model_dir : model_abs, cells, unresolved);
  // Models named by Hub id: their resolved metadata (a local snapshot each), so the engine reads
  // them as it would after its own download.
  if (const auto dirs = models.dirs_by_id(); !dirs.empty()) request["model_dirs"] = dirs;
  probes::EngineCheckOptions eo;
  eo.python = engine_python;
  eo.timeout_s = req.engine_timeout_s;
  eo.use_cache = req.engine_cache;
  eo.progress = services.progress;
  eo.site_packages = engine_site;
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
  const std::string version =
      record.value("version", Json()).is_string() ? record["version"].get<std::string>() : "(version unknown)";
  std::string msg = fmt::format("engine check: {} {} says {}", label, version, outcome);
  const double took = record.value("duration_s", Json(0.0)).is_number() ? record["duration_s"].get<double>() : 0.0;
  if (record.value("cached", false))
    msg += fmt::format(" (answered from the cache in {:.3f} s)", took);
  else if (record.value("timing_s", Json()).is_object() && record["timing_s"].value("import", Json()).is_number())
    msg += fmt::format(
        " ({:.1f} s: engine import {:.1f} s, plan {:.1f} s)", took, record["timing_s"]["import"].get<double>(),
        record["timing_s"].value("plan", Json(0.0)).is_number() ? record["timing_s"]["plan"].get<double>() : 0.0);
  if (!cells.empty()) msg += fmt::format("; {} matrix cells asked", cells.size());
  // How far the engine built the model on the meta device (engines/README.md, stage model-construction).
  if (const Json* built = find_fact(inputs, "engine_check.facts.model_construction");
      built && built->is_object() && built->value("parameter_bytes", Json()).is_number())
    msg += fmt::format("; the model built layer by layer as rank 0 ({:.2f} GiB of parameters{})",
                       (*built)["parameter_bytes"].get<double>() / (1024.0 * 1024 * 1024),
                       find_fact(inputs, "engine_check.facts.drafter_construction") ? ", and the drafter" : "");
  if (const Json* stop = find_fact(inputs, "engine_check.facts.model_construction_stopped");
      stop && stop->is_object() && stop->value("why", Json()).is_string())
    msg += fmt::format("; building the model stopped ({}) at {}: not asked beyond that point",
                       (*stop)["why"].get<std::string>(),
                       stop->value("raised_at", Json()).is_string() ? (*stop)["raised_at"].get<std::string>() : "?");
  // What the engine could not be asked without an input this machine lacks (vLLM's parser tokens
  // without the model's tokenizer files): the rest of the plan was asked.
  if (const Json* na = find_fact(inputs, "engine_check.facts.not_asked"); na && na->is_array())
    for (const auto& n : *na)
      if (n.is_string()) msg += "; not asked: " + n.get<std::string>();
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

namespace {

// The config's text, for its inline suppressions: stdin's as given, a file's read again (the
// reader has read it already, so it is there and small), none for a command line.
Expected<std::string> config_text(const CheckRequest& req) {
  if (req.file == "-") return req.text;
  if (req.file.empty()) return std::string();
  std::error_code ec;
  if (!fs::is_regular_file(req.file, ec)) return std::string();
  constexpr uintmax_t kMaxBytes = 16u << 20;
  if (fs::file_size(req.file, ec) > kMaxBytes || ec) return std::string();
  std::ifstream f(req.file, std::ios::binary);
  if (!f) return input_error("cannot read the config again for its inline suppressions", SourceLocation{req.file});
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

}  // namespace

Status add_suppressions(const CheckRequest& req, const Services& services, Report& report) {
  auto entries = ignore_args(req.ignore);
  if (!entries) return entries.error();
  std::vector<InlineSuppression> inline_entries;
  if (req.suppression_file) {
    if (req.settings) {
      entries->insert(entries->end(), req.settings->ignore.begin(), req.settings->ignore.end());
    } else {
      auto settings = project_settings_for(req.file);
      if (!settings) return settings.error();
      entries->insert(entries->end(), settings->ignore.begin(), settings->ignore.end());
    }
    auto text = config_text(req);
    if (!text) return text.error();
    auto found = inline_suppressions(report.input_path, *text);
    if (!found) return found.error();
    inline_entries = std::move(*found);
  }
  std::vector<const IgnoreEntry*> all;
  for (const auto& e : *entries) all.push_back(&e);
  for (const auto& s : inline_entries) all.push_back(&s.entry);
  for (const IgnoreEntry* ep : all) {
    const IgnoreEntry& e = *ep;
    if (services.catalog->find(e.id) || services.catalog->find_advisory(e.id)) continue;
    // A prefix pattern (SP30*, SPA-SGLANG-*) must name at least one rule or advisory, and `*` is
    // only its last character.
    if (is_id_pattern(e.id) && e.id.find('*') == e.id.size() - 1 && e.id.size() > 1) {
      bool any = false;
      for (const auto& r : services.catalog->rules) any = any || id_matches(e.id, r.id);
      for (const auto& a : services.catalog->advisories) any = any || id_matches(e.id, a.id);
      if (any) continue;
    }
    const std::string near = services.catalog->closest_id(e.id);
    const std::string msg =
        is_id_pattern(e.id)
            ? fmt::format(
                  "'{}' matches no rule or advisory id (a pattern is an id prefix ending in one `*`: SP30*, "
                  "SPA-VLLM-*)",
                  excerpt(e.id))
            : fmt::format("unknown rule id '{}'{}", excerpt(e.id),
                          near.empty() ? "" : fmt::format(" (did you mean {}?)", near));
    return e.source == "--ignore" ? usage_error("--ignore: " + msg) : input_error(msg, e.where);
  }
  apply_suppressions(report, *entries, services.today());
  for (const auto& s : inline_entries) apply_suppressions(report, {s.entry}, services.today(), s.line, s.end_line);
  return Ok{};
}

const std::vector<EvidenceSource>& evidence_sources() {
  static const std::vector<EvidenceSource> kSources = {
      {"probes.plan", nullptr, add_probes},
      {"probes.stack", nullptr, add_stack_probes},
      {"probes.engine", "asking the installed engine", add_engine_check},
  };
  return kSources;
}

}  // namespace specprobe::stages
