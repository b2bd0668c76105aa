// The engine check: the installed vLLM / SGLang asked through its adapter (see engine_check.hpp).
#include "probes/engine_check.hpp"

#include "facts/answers.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>

#include "common/embedded.hpp"
#include "common/output_file.hpp"
#include "common/run_cleanup.hpp"
#include "inputs/versions/python_env.hpp"
#include "probes/answer_cache.hpp"
#include "probes/probe_common.hpp"
#include "probes/runner.hpp"
#include "probes/stack_probes.hpp"

namespace fs = std::filesystem;

namespace specprobe::probes {

namespace {

constexpr size_t kMaxEngineText = 4000;
constexpr const char* kCacheSchema = "specprobe-engine-cache/1";

const std::set<std::string>& statuses() {
  static const std::set<std::string> s = {"ok", "refused", "missing-input", "adapter-error"};
  return s;
}
const std::set<std::string>& stages() {
  static const std::set<std::string> s = {"argparse",           "config",  "model-interface", "backend-selection",
                                          "model-construction", "request", "import",          "adapter"};
  return s;
}
const std::set<std::string>& verdict_stages() {
  static const std::set<std::string> s = {"argparse", "config", "model-interface", "backend-selection",
                                          "model-construction"};
  return s;
}

std::string engine_label(const std::string& engine) { return engine == "sglang" ? "SGLang" : "vLLM"; }

// A shell variable or placeholder left in a value: $NAME, ${NAME}, $(...), `...`.
bool unresolved_text(const std::string& s) {
  static const std::regex re(R"(\$\{?[A-Za-z_][A-Za-z0-9_]*|\$\(|`)");
  return std::regex_search(s, re);
}

bool any_unresolved(const Json& v) {
  if (v.is_string()) return unresolved_text(v.get<std::string>());
  if (v.is_array() || v.is_object())
    for (const auto& x : v)
      if (any_unresolved(x)) return true;
  return false;
}

std::string value_text(const Json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

// An environment variable the engine reads as a setting (VLLM_ROCM_USE_AITER, SGLANG_ENABLE_SPEC_V2,
// ...), which the deploy sets and the engine check passes on. Names that point at files or
// directories, or configure logging and networking, stay the adapter's own; credentials stay out.
bool engine_setting_env(const std::string& name) {
  static const std::regex setting(R"((VLLM|SGLANG|SGL)_[A-Z0-9_]+|FLASH_ATTENTION_TRITON_AMD_ENABLE)");
  static const std::regex own(
      R"(.*_(PATH|DIR|ROOT|HOME|FILE|PREFIX)|(VLLM|SGLANG)_(LOGGING|CONFIGURE_LOGGING|HOST_IP|PORT|RPC|CACHE|CONFIG|ASSETS|USAGE|NO_USAGE|DO_NOT_TRACK|PLUGINS).*)");
  // Credentials (VLLM_API_KEY, SGLANG_..._TOKEN) never leave the report's own redaction.
  static const std::regex secret(R"(.*(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH).*)");
  return std::regex_match(name, setting) && !std::regex_match(name, own) && !std::regex_match(name, secret);
}

bool is_model_flag(const std::string& engine, std::string name) {
  while (!name.empty() && name[0] == '-') name.erase(0, 1);
  std::replace(name.begin(), name.end(), '_', '-');
  return engine == "sglang" ? name == "model-path" || name == "model" : name == "model";
}

bool text_field(const Json& obj, const char* key, Json& out) {
  return clipped_text_or_null(obj, key, kMaxEngineText, out);
}

// One plan / cell record; "" when valid (OUT filled).
std::string validate_record(const Json& r, Json& out) {
  if (!r.is_object()) return "a record is not an object";
  const Json st = r.value("status", Json());
  if (!st.is_string() || !statuses().count(st.get<std::string>()))
    return "status is not ok, refused, missing-input or adapter-error";
  const std::string status = st.get<std::string>();
  const Json stage = r.value("stage", Json());
  if (!stage.is_null() && (!stage.is_string() || !stages().count(stage.get<std::string>())))
    return "stage " + stage.dump() + " is not one of the engine-check stages";
  out = {{"status", status}, {"stage", stage}};
  for (const char* key : {"exception", "message", "missing", "raised_at"}) {
    Json t;
    if (!text_field(r, key, t)) return std::string(key) + " is not a string";
    out[key] = t;
  }
  if (r.contains("facts") && !r["facts"].is_null()) {
    if (!r["facts"].is_object()) return "facts is not an object";
    if (r["facts"].dump().size() > 64 * 1024) return "facts are too large";
    out["facts"] = r["facts"];
  } else {
    out["facts"] = Json::object();
  }
  // Seconds per stage (argparse, config, ...), stages named as the adapter names them.
  if (r.contains("stage_s") && r["stage_s"].is_object()) {
    Json st = Json::object();
    for (const auto& [name, v] : r["stage_s"].items())
      if (stages().count(name) && v.is_number() && v.get<double>() >= 0) st[name] = v;
    out["stage_s"] = st;
  }
  if (r.contains("notes") && r["notes"].is_array()) {
    Json notes = Json::array();
    for (const auto& n : r["notes"])
      if (n.is_string() && notes.size() < 16) notes.push_back(n.get<std::string>().substr(0, 500));
    out["notes"] = notes;
  }
  if (status == "refused") {
    if (!stage.is_string() || !verdict_stages().count(stage.get<std::string>()))
      return "refused without the stage it would be raised at";
    if (!out["message"].is_string() || out["message"].get<std::string>().empty())
      return "refused without the engine's message";
  }
  if (status == "missing-input" && (!out["missing"].is_string() || out["missing"].get<std::string>().empty()))
    return "missing-input without what to supply";
  if (status == "ok" && !stage.is_null()) return "ok with a stage";
  return "";
}

Json error_record(const std::string& engine, const std::string& reason) {
  return {{"status", "adapter-error"}, {"reason", reason},       {"engine", engine},    {"version", nullptr},
          {"plan", nullptr},           {"cells", Json::array()}, {"platform", nullptr}, {"skipped", Json::array()}};
}

// The checkpoint metadata of every local directory the request names: its top-level .json and
// .py files (config.json, tokenizer and quantization configs, remote code).
void add_dirs(CacheKey& h, const Json& v, std::set<std::string>& seen) {
  if (v.is_string()) {
    std::string s = v.get<std::string>();
    if (s.size() > 1 && s[0] == '{') {
      Json inner = Json::parse(s, nullptr, false);
      if (!inner.is_discarded()) add_dirs(h, inner, seen);
      return;
    }
    std::error_code ec;
    if (s.empty() || s[0] != '/' || !fs::is_directory(s, ec) || !seen.insert(s).second) return;
    std::vector<std::string> files;
    for (fs::directory_iterator it(s, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string ext = it->path().extension().string();
      if ((ext == ".json" || ext == ".py") && it->is_regular_file(ec)) files.push_back(it->path().string());
    }
    std::sort(files.begin(), files.end());
    h.add("dir:" + s);
    for (const auto& f : files) h.add_file(f);
  } else if (v.is_array() || v.is_object()) {
    for (const auto& x : v) add_dirs(h, x, seen);
  }
}

std::string load_script(const std::string& name, const EngineCheckOptions& opts) {
  if (!opts.adapter_dir.empty()) return read_small_file((fs::path(opts.adapter_dir) / name).string(), 4u << 20);
  if (auto t = embedded_file("engines/" + name)) return std::string(*t);
  return {};
}

}  // namespace

Json engine_cell(const std::string& engine, int k, const std::string& backend, const std::string& kv) {
  Json o = Json::object();
  // The sweep's "fp8" is SGLang's fp8_e4m3 (SGLang has no plain "fp8" choice).
  const std::string dtype = engine == "sglang" && kv == "fp8" ? "fp8_e4m3" : kv;
  if (engine == "sglang") {
    o["--speculative-num-steps"] = std::to_string(k);
    o["--speculative-num-draft-tokens"] = std::to_string(k + 1);
  } else {
    o["--speculative-config"] = {{"num_speculative_tokens", k}};
  }
  if (!backend.empty()) o["--attention-backend"] = backend;
  o["--kv-cache-dtype"] = dtype;
  return {{"id", engine_cell_id(k, backend, kv)}, {"args_override", o}};
}

// The GPUs the engine is told the node has: the driver's count; for a declared GPU (which says which
// GPU, not how many) as many as the plan uses (TP x PP x DP), or the deploy's count when it states
// more. A deploy's count is per container or pod: multi-node launchers (Dynamo's nodeCount,
// LeaderWorkerSet) spread TP over nodes, so a count below the plan's is no refusal here, and the
// engines refuse a world size larger than the node.
static int64_t gpu_count(const Json& facts) {
  if (fact_string(facts, "gpu.source").value_or("") == "driver")
    if (auto n = fact_int(facts, "gpu.count")) return *n;
  int64_t n = 1;
  for (const char* size : {"serve.tp", "serve.pp", "serve.dp"})
    n *= std::clamp<int64_t>(fact_int(facts, size).value_or(1), 1, 4096);
  if (const Json* d = find_fact(facts, "deploy.gpus"); d && d->is_number_integer())
    n = std::max<int64_t>(n, d->get<int64_t>());
  return n;
}

Json engine_request(const Json& facts, const std::string& model_dir, const Json& cells,
                    std::vector<std::string>& unresolved) {
  const std::string engine = fact_string(facts, "engine.name").value_or("vllm");
  const std::string model_id = fact_string(facts, "model.id").value_or("");
  Json args = Json::array();
  bool model_given = false;
  std::vector<std::string> flags;
  if (const Json* given = find_fact(facts, "options.given"); given && given->is_array()) {
    for (const auto& g : *given) {
      if (!g.is_object() || !g.contains("flag") || !g["flag"].is_string()) continue;
      std::string flag = g["flag"].get<std::string>();
      const Json value = g.value("value", Json(true));
      const bool config = g.value("source", "") == "config";
      if (config) {
        // A --config file's key, as vLLM's own config-file loader turns it into arguments.
        if (flag == "model") {
          if (!value.is_string()) continue;
          model_given = engine == "sglang";
          if (engine == "sglang")
            flag = "--model-path";
          else
            continue;  // the positional model comes from model.id below
        } else {
          flag = "--" + flag;
        }
      }
      if (any_unresolved(value) || unresolved_text(flag)) {
        unresolved.push_back(flag + (value.is_boolean() ? "" : " " + value_text(value)));
        // The model flag when nothing else names the model: kept as written (see below).
        if (is_model_flag(engine, flag) && model_dir.empty() && model_id.empty() && value.is_string()) {
          args.push_back(flag);
          args.push_back(value_text(value));
          model_given = true;
        }
        continue;
      }
      if (is_model_flag(engine, flag)) model_given = true;
      if (value.is_boolean()) {
        if (value.get<bool>())
          args.push_back(flag);
        else if (!config)
          args.push_back(flag);  // never produced by the readers; kept as written
        continue;
      }
      if (value.is_null()) {
        args.push_back(flag);
        continue;
      }
      if (value.is_array()) {
        args.push_back(flag);
        for (const auto& x : value) args.push_back(value_text(x));
        continue;
      }
      args.push_back(flag);
      args.push_back(value_text(value));
    }
  }
  // The model: what the plan names (model.id), else the checkpoint dir itself.
  std::string model = model_id;
  if (model.empty() || unresolved_text(model)) {
    if (!model.empty()) unresolved.push_back("model " + model);
    // With no --model directory either, the text as written goes to the engine: its check then names
    // the value to supply (a missing input) instead of refusing a command without a model.
    if (!model_dir.empty() || model.empty()) model = model_dir;
  }
  if (!model_given && !model.empty()) {
    if (engine == "sglang")
      args.insert(args.begin(), {Json("--model-path"), Json(model)});
    else
      args.insert(args.begin(), model);
  }
  Json req = {{"engine", engine},
              {"args", args},
              {"model_dir", model_dir.empty() ? Json() : Json(model_dir)},
              {"model_id", model_id.empty() ? Json() : Json(model_id)},
              {"cells", cells.is_array() ? cells : Json::array()},
              {"allow_remote_code", false}};
  // The engine settings the deploy sets in the environment, as the engine will read them.
  if (const Json* env = find_fact(facts, "env"); env && env->is_object()) {
    Json e = Json::object();
    for (const auto& [name, v] : env->items())
      if (v.is_string() && engine_setting_env(name) && !unresolved_text(v.get<std::string>())) e[name] = v;
    if (!e.empty()) req["env"] = e;
  }
  // The GPU as the adapter declares it to the engine: NVIDIA by compute capability, AMD by gfx target
  // (the engine's ROCm platform derives the rest from it).
  const std::string vendor = fact_string(facts, "gpu.vendor").value_or("nvidia");
  const std::string arch = fact_string(facts, "gpu.arch").value_or("");
  Json gpu;
  if (vendor == "nvidia" && fact_int(facts, "gpu.cc_major"))
    gpu = {{"cc", {*fact_int(facts, "gpu.cc_major"), fact_int(facts, "gpu.cc_minor").value_or(0)}}};
  else if (vendor == "amd" && arch.rfind("gfx", 0) == 0)
    gpu = {{"vendor", "amd"}, {"arch", arch}};
  if (!gpu.is_null()) {
    gpu["name"] = fact_string(facts, "gpu.name").value_or("");
    // A GPU the driver reported is the one here: the adapter then asks the engine's own detection.
    gpu["declared"] = vendor == "amd" || fact_string(facts, "gpu.source").value_or("declared") != "driver";
    gpu["count"] = std::clamp<int64_t>(gpu_count(facts), 1, 4096);
    if (auto mem = fact_int(facts, "gpu.memory_bytes"); mem && *mem > 0)
      gpu["memory_gib"] = *mem / (1024.0 * 1024 * 1024);
    // SMs (CUs on AMD): kernel libraries size their grids by it while the engine builds the model.
    if (auto sms = fact_int(facts, "gpu.sm_count"); sms && *sms > 0)
      gpu[vendor == "amd" ? "compute_units" : "sm_count"] = *sms;
    req["gpu"] = gpu;
  }
  return req;
}

Json validate_engine_result(const Json& raw, const Json& request) {
  const std::string engine = request.value("engine", "vllm");
  if (!raw.is_object()) return error_record(engine, "the adapter printed no result object; not trusted");
  if (!raw.contains("schema")) {
    // A runner record: killed at the timeout, died, printed nothing or an unparseable line.
    auto text = [&](const char* key) {
      return raw.contains(key) && raw[key].is_string() ? raw[key].get<std::string>() : std::string();
    };
    std::string phase = clean_child_text(text("phase"));
    const std::string in_phase = phase.empty() ? "" : " in phase '" + phase + "'";
    std::string reason;
    if (raw.contains("timeout_s") && raw["timeout_s"].is_number())
      reason = fmt::format(
          "the {} adapter timed out after {:g} s{} and was killed (importing the engine takes 15-70 s "
          "on a slow machine: rerun with a larger --engine-timeout)",
          engine_label(engine), raw["timeout_s"].get<double>(), in_phase);
    else
      reason = fmt::format("the {} adapter failed{}: {}", engine_label(engine), in_phase,
                           text("reason").empty() ? "no result" : text("reason"));
    Json r = error_record(engine, reason + "; not trusted");
    if (!phase.empty()) r["phase"] = phase;
    for (const char* key : {"signal", "timeout_s", "stderr_tail"})
      if (raw.contains(key)) r[key] = raw[key];
    return r;
  }
  auto invalid = [&](const std::string& why) {
    Json r =
        error_record(engine, "the " + engine_label(engine) + " adapter's result is invalid (" + why + "); not trusted");
    r["raw"] = raw.dump(-1, ' ', false, Json::error_handler_t::replace).substr(0, 2000);
    return r;
  };
  if (raw["schema"] != kEngineSchema) return invalid(std::string("schema is not ") + kEngineSchema);
  if (raw.value("engine", Json()) != engine) return invalid("engine is not " + engine);
  Json version;
  if (!text_field(raw, "version", version)) return invalid("version is not a string");
  Json plan;
  if (auto why = validate_record(raw.value("plan", Json()), plan); !why.empty()) return invalid("plan: " + why);
  const std::string pst = plan["status"];
  if (version.is_null() && pst != "adapter-error" && pst != "missing-input")
    return invalid("a verdict without the engine's version");
  if (!raw.contains("cells") || !raw["cells"].is_array()) return invalid("cells is not a list");
  std::map<std::string, Json> answered;
  for (const auto& c : raw["cells"]) {
    if (!c.is_object() || !c.contains("id") || !c["id"].is_string()) return invalid("a cell has no id");
    Json out;
    if (auto why = validate_record(c, out); !why.empty())
      return invalid("cell " + c["id"].get<std::string>() + ": " + why);
    out["id"] = c["id"];
    if (!answered.emplace(c["id"].get<std::string>(), out).second)
      return invalid("cell " + c["id"].get<std::string>() + " answered twice");
  }
  Json cells = Json::array();
  std::set<std::string> asked;
  for (const auto& c : request.value("cells", Json::array())) {
    const std::string id = c.value("id", "");
    asked.insert(id);
    auto it = answered.find(id);
    if (it == answered.end()) return invalid("cell " + id + " is not answered");
    cells.push_back(it->second);
  }
  for (const auto& [id, _] : answered)
    if (!asked.count(id)) return invalid("cell " + id + " was not asked");
  Json r = {{"status", pst},
            {"reason", nullptr},
            {"engine", engine},
            {"version", version},
            {"plan", plan},
            {"cells", cells},
            {"platform", raw.value("platform", Json()).is_object() ? raw["platform"] : Json()},
            {"skipped", Json::array()},
            {"timing_s", raw.value("timing_s", Json()).is_object() ? raw["timing_s"] : Json()}};
  for (const auto& s : raw.value("skipped", Json::array()))
    if (s.is_object() && s.value("what", Json()).is_string() && s.value("why", Json()).is_string() &&
        r["skipped"].size() < 32)
      r["skipped"].push_back({{"what", s["what"]}, {"why", s["why"]}});
  if (pst == "adapter-error") {
    std::string why = plan["message"].is_string() ? plan["message"].get<std::string>() : "no reason given";
    r["reason"] = fmt::format("the {} adapter failed at stage {}: {}; not trusted", engine_label(engine),
                              plan["stage"].is_string() ? plan["stage"].get<std::string>() : "?", why);
  }
  return r;
}

std::string engine_cache_dir(const EngineCheckOptions& opts) { return user_cache_dir("engine", opts.cache_dir); }

std::string engine_cache_key(const Json& request, const EngineCheckOptions& opts) {
  const std::string engine = request.value("engine", "vllm");
  const std::string record = find_dist_record({engine}, opts.site_packages);
  if (record.empty() || editable_install(record)) return "";
  CacheKey h;
  h.add(kEngineSchema);
  h.add_file(record);  // the engine's build: its files' hashes, size and mtime
  // The interpreter by path, size and mtime (its content is megabytes; the engine's build is RECORD).
  h.add(opts.python);
  h.add_stat(opts.python);
  h.add(load_script("common.py", opts));
  h.add(load_script(engine + "_adapter.py", opts));
  h.add(request.dump());
  for (const char* name : {"CUDA_HOME", "CUDA_PATH", "LD_LIBRARY_PATH", "SPECPROBE_STACK_PASS_ENV"}) {
    const char* v = std::getenv(name);
    h.add(v ? v : "");
  }
  std::set<std::string> seen;
  add_dirs(h, request, seen);
  return h.hex();
}

namespace {
Json run_engine_check_timed(const Json& request, const EngineCheckOptions& opts);
}

Json run_engine_check(const Json& request, const EngineCheckOptions& opts) {
  const auto t0 = std::chrono::steady_clock::now();
  Json r = run_engine_check_timed(request, opts);
  r["duration_s"] =
      std::round(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() * 1000) / 1000;
  return r;
}

namespace {
Json run_engine_check_timed(const Json& request, const EngineCheckOptions& opts) {
  const std::string engine = request.value("engine", "vllm");
  const std::string key = opts.use_cache ? engine_cache_key(request, opts) : "";
  const std::string cache_dir = engine_cache_dir(opts);
  const std::string cache_file = key.empty() || cache_dir.empty() ? "" : cache_dir + "/" + key + ".json";
  if (!cache_file.empty()) {
    // An unreadable entry, one for other inputs, or an invalid one is a miss (replaced below).
    if (auto raw = read_cached_answer(cache_file, kCacheSchema, key)) {
      Json r = validate_engine_result(*raw, request);
      if (r["status"] != "adapter-error") {
        r["cached"] = true;
        r["python"] = opts.python;
        r["cache_key"] = key;
        return r;
      }
    }
  }
  auto fail = [&](const std::string& why) {
    Json r = error_record(engine, why);
    r["cached"] = false;
    r["python"] = opts.python;
    return r;
  };
  auto python = resolve_python(opts.python);
  if (!python) return fail("cannot run the engine adapter: " + python.error().message);
  const std::string adapter = engine + "_adapter.py";
  const std::string script = load_script(adapter, opts);
  const std::string common = load_script("common.py", opts);
  if (script.empty() || common.empty()) return fail("no engine adapter script " + adapter);

  InterruptScope interrupts;
  const PrivateDir private_dir(private_dir_template("engine"));
  if (private_dir.path().empty()) return fail("cannot create a private temp dir: " + std::string(std::strerror(errno)));
  const std::string& dir = private_dir.path();
  std::error_code ec;
  fs::create_directories(dir + "/tmp", ec);
  fs::create_directories(dir + "/cache", ec);
  std::ofstream(dir + "/" + adapter, std::ios::binary) << script;
  std::ofstream(dir + "/common.py", std::ios::binary) << common;
  RunnerOptions ro;
  ro.timeout_s = opts.timeout_s;
  // env -i NAME=VALUE... python -s -B adapter   (the runner appends --specs JSON)
  ro.child_command = {opts.env_program, "-i"};
  for (auto& e : stack_child_env(dir, process_env())) ro.child_command.push_back(e);
  ro.child_command.push_back("SPECPROBE_ENGINE_PHASE_FILE=" + dir + "/phase");
  ro.child_command.push_back("SPECPROBE_ENGINE_PRIVATE_DIR=" + dir);
  ro.child_command.insert(ro.child_command.end(), {*python, "-s", "-B", dir + "/" + adapter});
  if (opts.progress) {
    opts.progress(fmt::format("engine check {}: starting {}", engine, *python));
    ro.on_phase = [&](const std::string& phase) { opts.progress(fmt::format("engine check {}: {}", engine, phase)); };
  }
  Json spec = {{"probe", "engine_" + engine}, {"params", request}};
  auto raw = run_probes_isolated({spec}, ro);
  Json first = raw.empty() ? Json() : raw[0];
  if (first.is_object() && !first.contains("schema")) {
    // Killed or died: the phase the adapter last recorded says where (the file survives the kill).
    std::string phase = read_small_file(dir + "/phase", 200);
    while (!phase.empty() && (phase.back() == '\n' || phase.back() == ' ')) phase.pop_back();
    if (!phase.empty()) first["phase"] = phase;
  }
  Json r = validate_engine_result(first, request);
  r["cached"] = false;
  r["python"] = *python;
  if (!cache_file.empty() && r["status"] != "adapter-error") {
    if (write_cached_answer(cache_file, kCacheSchema, key, first)) r["cache_key"] = key;
  }
  return r;
}
}  // namespace

Json engine_facts_patch(const Json& record, const std::vector<std::string>& unresolved) {
  Json f = Json::object();
  const std::string engine = record.value("engine", "vllm");
  const std::string status = record.value("status", "adapter-error");
  const Json plan = record.value("plan", Json());
  set_fact(f, "engine_check.requested", true);
  set_fact(f, "engine_check.ran", true);
  set_fact(f, "engine_check.engine", engine);
  set_fact(f, "engine_check.engine_label", engine_label(engine));
  set_fact(f, "engine_check.outcome", status);
  set_fact(f, "engine_check.status", status == "ok" || status == "refused" ? Json(status) : Json());
  set_fact(f, "engine_check.version", record.value("version", Json()));
  set_fact(f, "engine_check.python", record.value("python", Json()));
  set_fact(f, "engine_check.cached", record.value("cached", false));
  set_fact(f, "engine_check.duration_s", record.value("duration_s", Json()));
  Json timing = record.value("timing_s", Json());
  // The plan's stages (argparse, config, ..., model-construction): the engine's own config time is
  // import + argparse + config; the rest is what the server does before it loads weights.
  if (timing.is_object() && plan.is_object() && plan.value("stage_s", Json()).is_object())
    timing["plan_stages"] = plan["stage_s"];
  set_fact(f, "engine_check.timing_s", timing.is_object() ? timing : Json());
  Json unres = Json::array();
  for (const auto& u : unresolved) unres.push_back(u);
  set_fact(f, "engine_check.unresolved", unres);
  set_fact(f, "engine_check.reason", record.value("reason", Json()));
  set_fact(f, "engine_check.phase", record.value("phase", Json()));
  for (const char* key : {"stage", "exception", "message", "missing", "raised_at"})
    set_fact(f, std::string("engine_check.") + key, plan.is_object() ? plan.value(key, Json()) : Json());
  set_fact(f, "engine_check.facts", plan.is_object() ? plan.value("facts", Json::object()) : Json::object());
  set_fact(f, "engine_check.skipped", record.value("skipped", Json::array()));
  set_fact(f, "engine_check.platform", record.value("platform", Json()));
  Json cells = Json::object();
  for (const auto& c : record.value("cells", Json::array())) {
    Json cell = {{"status", c["status"]},
                 {"stage", c["stage"]},
                 {"message", c["message"]},
                 {"missing", c["missing"]},
                 {"raised_at", c["raised_at"]}};
    for (const char* k : {"attention_backend", "drafter_attention_backend", "cudagraph_mode"})
      if (c["facts"].contains(k)) cell[k] = c["facts"][k];
    cells[c["id"].get<std::string>()] = cell;
  }
  set_fact(f, "engine_check.cells", cells);
  // The answer records a matrix cell's evidence reads (facts/answers.hpp): the plan's, and one per
  // cell asked, each for the cell whose engine_check.cell names it (the sweep sets a cell's id,
  // rules/sweep.cpp); quoted in the engine's words when it refused.
  set_fact(f, "engine_check.cell", "plan");
  const Json version = record.value("version", Json());
  const std::string who =
      fmt::format("{} {}", engine_label(engine), version.is_string() ? version.get<std::string>() : std::string("?"));
  auto answer = [&](const std::string& id, const std::string& st, const Json& stage, const Json& message) {
    const Json r = {{"probe", "engine"}, {"status", st == "ok" ? "pass" : st == "refused" ? "fail" : "skip"}};
    Json& a = append_answer(f, r, who, "engine_check", {{"engine_check.cell", id}}, false, kEngineAnswers);
    a["says"] = st == "refused" ? fmt::format("{} ({}): {}", who, stage.is_string() ? stage.get<std::string>() : "?",
                                              message.is_string() ? message.get<std::string>() : "")
                                : fmt::format("engine: {} accepted this configuration", who);
  };
  answer("plan", status, plan.is_object() ? plan.value("stage", Json()) : Json(),
         plan.is_object() ? plan.value("message", Json()) : Json());
  for (const auto& [id, c] : cells.items()) {
    answer(id, c.value("status", ""), c.value("stage", Json()), c.value("message", Json()));
    // What the engine check's facts are in that cell (SP4100 reads them): its answer there, and
    // what the engine resolved for the cell (the backends and CUDA-graph mode its selector chose).
    const std::string st = c.value("status", "");
    Json resolved = Json::object();
    for (const char* key : {"attention_backend", "drafter_attention_backend", "cudagraph_mode"})
      if (c.contains(key)) resolved[key] = c[key];
    Json cf = Json::array({Json::array({"engine_check.cell", id}), Json::array({"engine_check.ran", true}),
                           Json::array({"engine_check.outcome", st}),
                           Json::array({"engine_check.status", st == "ok" || st == "refused" ? Json(st) : Json()}),
                           Json::array({"engine_check.facts", resolved})});
    for (const char* key : {"stage", "message", "missing", "raised_at"})
      cf.push_back(Json::array({std::string("engine_check.") + key, c.value(key, Json())}));
    Json* arr = const_cast<Json*>(find_fact(f, kEngineAnswers));
    arr->back()["for_cell"] = id;
    arr->back()["cell_facts"] = std::move(cf);
  }
  // A cell it was not asked about is not engine-checked: the plan's answer says nothing about
  // another k, backend or KV dtype.
  set_fact(f, "engine_check.unasked_cell_facts",
           Json::array({Json::array({"engine_check.requested", false}), Json::array({"engine_check.ran", false}),
                        Json::array({"engine_check.facts", nullptr}), Json::array({"engine_check.cell", nullptr})}));
  return f;
}

}  // namespace specprobe::probes
