// Stack probes: the deployment's own libraries, run through adapter scripts (see stack_probes.hpp).
#include "probes/stack_probes.hpp"

#include "facts/answers.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>

#include "common/ascii.hpp"
#include "common/embedded.hpp"
#include "common/run_cleanup.hpp"
#include "inputs/versions/python_env.hpp"
#include "probes/answer_cache.hpp"
#include "probes/probe_common.hpp"
#include "probes/runner.hpp"
#include "probes/stack_kinds.hpp"

extern char** environ;

namespace fs = std::filesystem;

namespace specprobe::probes {

namespace {

constexpr size_t kMaxAdapterText = 4000;  // longest string kept from an adapter
constexpr size_t kMaxCases = 64;
constexpr const char* kStackCommon = "stack_common.py";  // imported by every adapter
constexpr const char* kAnswerSchema = "specprobe-stack-cache/1";

std::string display_name(const Json& spec) {
  std::string name = "stack " + spec.value("library", std::string("?"));
  if (spec.contains("params"))
    for (const auto& [k, v] : spec["params"].items())
      name += " " + k + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
  return name;
}

Json base_record(const Json& spec, const std::string& status, const std::string& reason) {
  const std::string lib = spec.value("library", "");
  return {{"probe", spec.value("probe", "stack_" + lib)},
          {"name", display_name(spec)},
          {"library", lib},
          {"adapter", "stack_" + lib},
          {"status", status},
          {"reason", reason},
          {"error_text", nullptr},
          {"version", nullptr},
          {"device", nullptr},
          {"cases", Json::array()},
          {"spec", spec}};
}

bool is_state(const Json& j) {
  if (!j.is_string()) return false;
  const auto s = j.get<std::string>();
  return s == kPass || s == kFail || s == kSkip || s == kError;
}

bool text_or_null(const Json& obj, const char* key, Json& out) {
  return clipped_text_or_null(obj, key, kMaxAdapterText, out);
}

std::string validate_case(const Json& c, const std::string& lib, Json& out) {
  if (!c.is_object()) return "a case is not an object";
  if (!c.contains("name") || !c["name"].is_string()) return "a case has no name";
  if (!c.contains("key") || !c["key"].is_string() ||
      !std::regex_match(c["key"].get<std::string>(), std::regex("[a-z0-9_]+(\\.[a-z0-9_]+)*")) ||
      c["key"].get<std::string>().size() > 64)
    return "case '" + c["name"].get<std::string>() + "' has no valid key";
  if (!is_state(c.value("status", Json()))) return "case '" + c["name"].get<std::string>() + "' has an invalid status";
  out = {{"name", c["name"]}, {"key", c["key"]}, {"status", c["status"]}};
  Json t;
  if (!text_or_null(c, "reason", t)) return "a case's reason is not a string";
  out["reason"] = t.is_null() ? Json("") : t;
  if (!text_or_null(c, "error_text", t)) return "a case's error_text is not a string";
  out["error_text"] = t;
  if (c.contains("params")) {
    if (!c["params"].is_object()) return "a case's params is not an object";
    out["params"] = c["params"];
  }
  if (c.contains("max_rel_err") && c["max_rel_err"].is_number()) out["max_rel_err"] = c["max_rel_err"];
  if (c.contains("api") && c["api"].is_string()) out["api"] = c["api"];
  if (const StackKind* kind = find_stack_kind(lib); kind && kind->check_case) return kind->check_case(out);
  return "";
}

// The last "@@specprobe phase NAME" line in an adapter's stderr tail, or "".
std::string phase_from_stderr(const std::string& err) {
  static const std::string kMarker = "@@specprobe phase ";
  const size_t at = err.rfind(kMarker);
  if (at == std::string::npos || (at > 0 && err[at - 1] != '\n')) return "";
  const size_t end = err.find('\n', at);
  return clean_child_text(
      err.substr(at + kMarker.size(), end == std::string::npos ? std::string::npos : end - at - kMarker.size()));
}

std::string format_seconds(double s) { return fmt::format("{:g} s", s); }

}  // namespace

const std::vector<std::string>& stack_libraries() {
  static const std::vector<std::string> kLibs = [] {
    std::vector<std::string> v;
    for (const auto& k : stack_kinds()) v.push_back(k.library);
    return v;
  }();
  return kLibs;
}

std::vector<std::string> stack_child_env(const std::string& private_dir, const std::vector<std::string>& parent,
                                         const std::string& cache_root) {
  const std::string cache = cache_root.empty() ? private_dir + "/cache" : cache_root;
  std::set<std::string> pass = {
      "PATH", "LD_LIBRARY_PATH", "LD_PRELOAD", "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "CUDA_HOME", "CUDA_PATH"};
  for (const auto& e : parent)
    if (e.rfind("SPECPROBE_STACK_PASS_ENV=", 0) == 0) {
      std::string list = e.substr(25);
      size_t pos = 0;
      while (pos <= list.size()) {
        const size_t comma = list.find(',', pos);
        std::string name = list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
        if (!name.empty()) pass.insert(name);
        if (comma == std::string::npos) break;
        pos = comma + 1;
      }
    }
  // Set by specprobe; never taken from the parent even when listed.
  const std::vector<std::pair<std::string, std::string>> own = {
      {"HOME", private_dir},
      {"TMPDIR", private_dir + "/tmp"},
      {"XDG_CACHE_HOME", cache},
      {"TRITON_CACHE_DIR", cache + "/triton"},
      {"DG_JIT_CACHE_DIR", cache + "/deep_gemm"},
      {"TORCH_EXTENSIONS_DIR", cache + "/torch_extensions"},
      {"PYTHONNOUSERSITE", "1"},
      {"PYTHONDONTWRITEBYTECODE", "1"},
      {"PYTHONUNBUFFERED", "1"},
      {"PYTHONIOENCODING", "utf-8"},
      {"SPECPROBE_STACK_PHASE_FILE", private_dir + "/phase"},
  };
  std::set<std::string> own_names;
  for (const auto& [k, _] : own) own_names.insert(k);
  std::vector<std::string> env;
  bool have_path = false;
  for (const auto& e : parent) {
    const size_t eq = e.find('=');
    if (eq == std::string::npos) continue;
    const std::string name = e.substr(0, eq);
    if (!pass.count(name) || own_names.count(name)) continue;
    env.push_back(e);
    have_path |= name == "PATH";
  }
  if (!have_path) env.push_back("PATH=/usr/local/bin:/usr/bin:/bin");
  for (const auto& [k, v] : own) env.push_back(k + "=" + v);
  std::sort(env.begin(), env.end());
  return env;
}

std::vector<Json> stack_probe_specs(const Json& facts, const StackProbeOptions& opts) {
  std::vector<Json> specs;
  for (const auto& kind : stack_kinds()) {
    const auto& asked = opts.libraries;
    const bool named = std::find(asked.begin(), asked.end(), kind.library) != asked.end();
    if (!asked.empty() && !named) continue;
    specs.push_back(kind.plan_spec(facts, opts, named));
  }
  return specs;
}

Json validate_stack_result(const Json& raw, const Json& spec) {
  const std::string lib = spec.value("library", "");
  if (!raw.is_object()) return base_record(spec, kError, "the adapter printed no result object; not trusted");
  if (!raw.contains("schema")) {
    // A runner record: the child crashed, hung, printed nothing or printed unparseable JSON.
    // Untrusted: a child may print an object without "schema" whose fields have any type.
    auto text = [&](const char* key, std::string fallback) {
      return raw.contains(key) && raw[key].is_string() ? raw[key].get<std::string>() : fallback;
    };
    const std::string st = text("status", kError);
    std::string why = text("reason", "no result");
    std::string phase = clean_child_text(text("phase", ""));
    if (phase.empty()) phase = phase_from_stderr(text("stderr_tail", ""));
    const std::string in_phase = phase.empty() ? "" : " in phase '" + phase + "'";
    std::string reason;
    if (raw.contains("timeout_s") && raw["timeout_s"].is_number()) {
      // Usually a first-use JIT build (FlashInfer, DeepGEMM, Triton compile on the first call).
      const double t = raw["timeout_s"].get<double>();
      reason = fmt::format(
          "the {} adapter timed out after {}{} and was killed (a first run JIT-compiles the "
          "library's kernels, which can take minutes: rerun with a larger --stack-timeout, e.g. "
          "--stack-timeout {:g})",
          lib, format_seconds(t), in_phase, std::max(600.0, 2 * t));
    } else {
      reason = (st == kCrash ? "the adapter process failed" + in_phase + ": " : "") + why;
    }
    Json r = base_record(spec, kError, reason + "; not trusted");
    for (const char* key : {"signal", "timeout_s", "stderr_tail"})
      if (raw.contains(key)) r[key] = raw[key];
    if (!phase.empty()) r["phase"] = phase;
    return r;
  }
  auto invalid = [&](const std::string& why) {
    Json r = base_record(spec, kError, "the adapter's result is invalid (" + why + "); not trusted");
    r["raw"] = raw.dump().substr(0, 2000);
    return r;
  };
  if (raw["schema"] != kStackSchema) return invalid("schema is not " + std::string(kStackSchema));
  if (raw.value("adapter", Json()) != "stack_" + lib) return invalid("adapter is not stack_" + lib);
  if (raw.value("library", Json()) != lib) return invalid("library is not " + lib);
  if (!is_state(raw.value("status", Json()))) return invalid("status is not pass, fail, skip or error");
  Json r = base_record(spec, raw["status"].get<std::string>(), "");
  r["source"] = "adapter";
  Json t;
  if (!text_or_null(raw, "reason", t)) return invalid("reason is not a string");
  r["reason"] = t.is_null() ? Json("") : t;
  if (!text_or_null(raw, "error_text", t)) return invalid("error_text is not a string");
  r["error_text"] = t;
  if (!text_or_null(raw, "version", t)) return invalid("version is not a string");
  r["version"] = t;
  if (raw.contains("device") && !raw["device"].is_null()) {
    const Json& d = raw["device"];
    if (!d.is_object() || !d.contains("sm") || !d["sm"].is_number_integer() || !d.value("name", Json()).is_string())
      return invalid("device is not {name, sm}");
    r["device"] = {{"name", d["name"]}, {"sm", d["sm"]}};
  }
  if (!raw.contains("cases") || !raw["cases"].is_array()) return invalid("cases is not an array");
  if (raw["cases"].size() > kMaxCases) return invalid("too many cases");
  std::set<std::string> keys;
  int fails = 0, passes = 0;
  for (const auto& c : raw["cases"]) {
    Json out;
    if (auto why = validate_case(c, lib, out); !why.empty()) return invalid(why);
    if (!keys.insert(out["key"].get<std::string>()).second)
      return invalid("duplicate case key " + out["key"].get<std::string>());
    fails += out["status"] == kFail;
    passes += out["status"] == kPass;
    r["cases"].push_back(out);
  }
  const std::string st = r["status"];
  if (st == kPass && (passes == 0 || fails > 0))
    return invalid("status pass without a passing case, or with a failing one");
  if (st == kFail && fails == 0) return invalid("status fail without a failing case");
  if ((st == kSkip || st == kError) && r["reason"].get<std::string>().empty()) return invalid(st + " without a reason");
  const StackKind* kind = find_stack_kind(lib);
  if (st == kPass && r["device"].is_null() && !(kind && kind->answers_without_gpu))
    return invalid("pass without the device it ran on");
  if (kind && kind->check_result)
    if (auto why = kind->check_result(r, spec); !why.empty()) return invalid(why);
  return r;
}

Json run_stack_probe(const Json& spec, const StackProbeOptions& opts) {
  const std::string lib = spec.value("library", "");
  if (spec.contains("skip_reason")) return base_record(spec, kSkip, spec["skip_reason"].get<std::string>());
  auto python = resolve_python(opts.python);
  if (!python) return base_record(spec, kError, "cannot run the adapter: " + python.error().message);
  const std::string script_name = "stack_" + lib + ".py";
  // The adapter and the shared module it imports from its own directory.
  auto load = [&](const std::string& name) {
    std::string text;
    if (!opts.adapter_dir.empty()) {
      std::ifstream in(fs::path(opts.adapter_dir) / name, std::ios::binary);
      text.assign(std::istreambuf_iterator<char>(in), {});
    } else if (auto t = embedded_file("probes/" + name)) {
      text = std::string(*t);
    }
    return text;
  };
  const std::string script = load(script_name);
  if (script.empty()) return base_record(spec, kError, "no adapter script " + script_name);
  const std::string common = load(kStackCommon);
  if (common.empty()) return base_record(spec, kError, std::string("no adapter module ") + kStackCommon);

  // A pass or fail measured before with nothing that decides it changed (answer_cache.hpp).
  const std::string key = opts.use_cache ? stack_answer_key(spec, opts, *python, script + common) : "";
  const std::string base = user_cache_dir("stack", opts.cache_dir);
  const std::string answer_file = key.empty() || base.empty() ? "" : base + "/answers/" + key + ".json";
  if (!answer_file.empty())
    if (auto raw = read_cached_answer(answer_file, kAnswerSchema, key)) {
      Json r = validate_stack_result(*raw, spec);
      if (r["status"] == kPass || r["status"] == kFail) {
        r["python"] = *python;
        r["cache_dir"] = stack_cache_root(opts, *python, lib);
        r["cached"] = true;
        if (opts.progress) opts.progress(fmt::format("stack probe {}: answer from the cache", lib));
        return r;
      }
    }

  // The private dir goes on every exit path: its destructor, a caught SIGINT/SIGTERM/SIGHUP
  // (the scope re-raises it after the cleanup), or the guardian when this process is killed.
  InterruptScope interrupts;
  const PrivateDir private_dir(private_dir_template("stack"));
  if (private_dir.path().empty())
    return base_record(spec, kError, "cannot create a private temp dir: " + std::string(std::strerror(errno)));
  const std::string& dir = private_dir.path();
  std::error_code ec;
  fs::create_directories(dir + "/tmp", ec);
  fs::create_directories(dir + "/cache", ec);
  // The persistent library caches (a directory that cannot be made: the private, cold one).
  std::string cache_root = opts.use_cache ? stack_cache_root(opts, *python, lib) : "";
  if (!cache_root.empty()) {
    fs::create_directories(cache_root, ec);
    if (ec || !fs::is_directory(cache_root, ec)) cache_root.clear();
  }
  const std::string script_path = dir + "/" + script_name;
  std::ofstream(script_path, std::ios::binary) << script;
  std::ofstream(dir + "/" + kStackCommon, std::ios::binary) << common;
  const std::vector<std::string> parent = process_env();
  RunnerOptions ro;
  ro.timeout_s = opts.timeout_s;
  // env -i NAME=VALUE... python -s -B script   (the runner appends --specs JSON)
  ro.child_command = {opts.env_program, "-i"};
  for (auto& e : stack_child_env(dir, parent, cache_root)) ro.child_command.push_back(e);
  ro.child_command.insert(ro.child_command.end(), {*python, "-s", "-B", script_path});
  if (opts.progress) {
    opts.progress(fmt::format("stack probe {}: starting {}", lib, *python));
    ro.on_phase = [&](const std::string& phase) { opts.progress(fmt::format("stack probe {}: {}", lib, phase)); };
  }
  Json s = spec;
  auto raw = run_probes_isolated({s}, ro);
  if (!raw.empty() && raw[0].is_object() && !raw[0].contains("schema")) {
    // Killed or died: the phase the adapter last recorded says where (the file survives the kill).
    std::ifstream in(dir + "/phase", std::ios::binary);
    std::string phase(200, '\0');
    in.read(phase.data(), static_cast<std::streamsize>(phase.size()));
    phase.resize(static_cast<size_t>(in.gcount()));
    if (!phase.empty()) raw[0]["phase"] = phase;
  }
  Json r = validate_stack_result(raw.empty() ? Json() : raw[0], spec);
  r["python"] = *python;
  r["cache_dir"] = cache_root.empty() ? Json(nullptr) : Json(cache_root);
  r["cached"] = false;
  if (!answer_file.empty() && (r["status"] == kPass || r["status"] == kFail))
    (void)write_cached_answer(answer_file, kAnswerSchema, key, raw[0]);  // a miss only costs the next run time
  return r;
}

std::string stack_answer_key(const Json& spec, const StackProbeOptions& opts, const std::string& python,
                             const std::string& scripts) {
  const std::string lib = spec.value("library", "");
  const StackKind* kind = find_stack_kind(lib);
  if (!kind || spec.contains("skip_reason")) return "";
  // An adapter that answers without a GPU (run false: for the GPU its spec declares) is keyed
  // without one; any other answer only for the GPU it ran on.
  const bool gpu_free = kind->answers_without_gpu && spec.contains("params") && spec["params"].is_object() &&
                        spec["params"].value("run", Json(true)) == false;
  if (opts.machine.empty() && !gpu_free) return "";
  std::vector<std::string> dists;
  for (const char* d : kind->distributions)
    if (d) dists.push_back(d);
  const std::string record = find_dist_record(dists, opts.site_packages);
  if (record.empty() || editable_install(record)) return "";
  CacheKey h;
  h.add(kAnswerSchema);
  h.add(kStackSchema);
  h.add(scripts);
  h.add(spec.dump());
  h.add(python);
  h.add_stat(python);
  h.add_file(record);
  for (const char* extra : {"torch", "flashinfer_cubin", "flashinfer_jit_cache"}) {
    const std::string r = find_dist_record({extra}, opts.site_packages);
    h.add(extra);
    if (!r.empty()) h.add_file(r);
  }
  h.add(gpu_free ? "no GPU: the one the spec declares" : opts.machine);
  // What the child inherits from this process: its environment as stack_child_env builds it, with
  // fixed stand-ins for the private and cache dirs (they differ per run, not per answer).
  for (const std::string& e : stack_child_env("/private", process_env(), "/cache")) h.add(e);
  return h.hex();
}

std::string stack_cache_root(const StackProbeOptions& opts, const std::string& python, const std::string& library) {
  const std::string base = user_cache_dir("stack", opts.cache_dir);
  if (base.empty()) return "";
  // One directory per interpreter (its path: a venv) and library.
  return fmt::format("{}/{}-{:016x}", base, library, fnv1a64(python + "\x1f" + library));
}

Json stack_facts_patch(const std::vector<Json>& results, const std::string& python) {
  Json f = Json::object();
  bool ran = false;
  std::string errors;
  for (const auto& r : results) {
    const std::string lib = r.value("library", "");
    if (lib.empty()) continue;
    const std::string st = r.value("status", std::string(kError));
    ran |= r.value("source", "") == "adapter" || st == kError;
    const std::string p = "stack." + lib;
    set_fact(f, p + ".status", st);
    set_fact(f, p + ".reason", r.value("reason", ""));
    set_fact(f, p + ".error_text", r.value("error_text", Json()));
    set_fact(f, p + ".version", r.value("version", Json()));
    set_fact(f, p + ".cached", r.value("cached", false));
    const Json dev = r.value("device", Json());
    set_fact(f, p + ".device_sm", dev.is_object() ? dev["sm"] : Json());
    set_fact(f, p + ".device_name", dev.is_object() ? dev["name"] : Json());
    for (const auto& c : r.value("cases", Json::array())) {
      const std::string cp = p + "." + c["key"].get<std::string>();
      set_fact(f, cp + ".status", c["status"]);
      set_fact(f, cp + ".reason", c.value("reason", ""));
      set_fact(f, cp + ".error_text", c.value("error_text", Json()));
    }
    if (st == kError) errors += (errors.empty() ? "" : "; ") + lib + ": " + r.value("reason", "");
    // The kind's own facts and the answer records the sweep reads (facts/answers.hpp).
    if (const StackKind* kind = find_stack_kind(lib); kind && kind->record) kind->record(r, f);
  }
  set_fact(f, "stack.ran", ran);
  set_fact(f, "stack.python", python.empty() ? Json() : Json(python));
  set_fact(f, "stack.errors", errors.empty() ? Json() : Json(errors));
  return f;
}

StackRun run_stack_specs(const std::vector<Json>& specs, const StackProbeOptions& opts) {
  StackRun run;
  StackProbeOptions o = opts;
  std::string asked_note;
  const bool any_runs =
      std::any_of(specs.begin(), specs.end(), [](const Json& s) { return !s.contains("skip_reason"); });
  if (o.ask_interpreter && any_runs) {
    // Run what the interpreter says it is (a pyenv shim resolves to the selected version's python).
    if (auto env = inspect_python(o.python, std::min(o.timeout_s, 30.0), o.env_program)) {
      o.python = env->executable;
      if (o.site_packages.empty()) o.site_packages = env->site_packages;
    } else {
      asked_note = env.error().message + "; running it as given";
    }
  }
  std::vector<Json> results;
  for (const auto& s : specs) {
    results.push_back(run_stack_probe(s, o));
    if (!asked_note.empty() && !s.contains("skip_reason")) results.back()["python_note"] = asked_note;
  }
  auto py = resolve_python(o.python);
  run.facts_patch = stack_facts_patch(results, py ? *py : o.python);
  for (auto& r : results) run.results.push_back(std::move(r));
  return run;
}

StackRun run_stack_probes(const Json& facts, const StackProbeOptions& opts) {
  return run_stack_specs(stack_probe_specs(facts, opts), opts);
}

}  // namespace specprobe::probes
